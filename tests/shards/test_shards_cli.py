"""``tusk shards split|join``: exact bytes back, or a non-zero exit naming job and shards."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from shard_helpers import context_doc


def tusk(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "tusk.cli.main", *args], input=stdin, capture_output=True, timeout=60
    )


def split(tmp_path: Path, data: bytes, *extra: str) -> list[str]:
    source = tmp_path / "context.json"
    source.write_bytes(data)
    done = tusk("shards", "split", str(source), *extra)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode().splitlines()


def join(tmp_path: Path, lines: list[str], *extra: str) -> subprocess.CompletedProcess[bytes]:
    target = tmp_path / "shards.jsonl"
    target.write_text("\n".join(lines) + "\n")
    return tusk("shards", "join", str(target), *extra)


def test_split_then_join_restores_the_exact_bytes_in_any_order(tmp_path):
    data = context_doc(raw={"comments": [f"comment {i} ✓" for i in range(400)]}) + b"\n  "
    lines = split(tmp_path, data, "--max-bytes", "200")
    assert len(lines) > 3
    done = join(tmp_path, [*reversed(lines), lines[1]], "--validate")
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == data


def test_every_split_line_is_a_dispatchable_payload(tmp_path):
    for line in split(tmp_path, context_doc(raw="x" * 5000), "--max-bytes", "1024"):
        payload = json.loads(line)
        assert set(payload) == {
            "jobid",
            "shard_index",
            "total_shards",
            "encoding",
            "checksum",
            "data",
        }
        assert len(line) < 65535


def test_bytes_without_a_jobid_need_one_given(tmp_path):
    source = tmp_path / "blob.bin"
    source.write_bytes(b"\x00\xffnot json")
    refused = tusk("shards", "split", str(source))
    assert refused.returncode != 0
    assert b"--jobid" in refused.stderr
    lines = split(tmp_path, b"\x00\xffnot json", "--jobid", "job-blob")
    assert join(tmp_path, lines).stdout == b"\x00\xffnot json"


def test_join_names_the_job_and_the_missing_shards(tmp_path):
    lines = split(tmp_path, context_doc(raw="m" * 3000), "--max-bytes", "128")
    done = join(tmp_path, [line for i, line in enumerate(lines) if i not in (0, 2)])
    assert done.returncode != 0
    assert done.stdout == b"" or b"::error" in done.stdout
    message = done.stderr.decode()
    assert "job job-0001" in message
    assert f"shards 0, 2 of {len(lines)} are missing" in message


def test_join_names_conflicting_shards(tmp_path):
    lines = split(tmp_path, context_doc(raw="c" * 3000), "--max-bytes", "128")
    forged = json.loads(lines[1])
    forged["data"] = forged["data"][::-1]
    done = join(tmp_path, [*lines, json.dumps(forged)])
    assert done.returncode != 0
    assert "job job-0001" in done.stderr.decode()
    assert "shards 1 were delivered twice with different content" in done.stderr.decode()


def test_join_names_a_corrupt_line_and_its_job(tmp_path):
    lines = split(tmp_path, context_doc(raw="k" * 3000), "--max-bytes", "128")
    broken = json.loads(lines[3])
    broken["total_shards"] = 0
    done = join(tmp_path, [*lines[:3], json.dumps(broken), *lines[4:]])
    assert done.returncode != 0
    message = done.stderr.decode()
    assert "job job-0001" in message
    assert "line 4 is not a valid shard" in message
    assert done.stdout.count(b"{") == 0  # no partial document was written


def test_join_accepts_whole_dispatch_events(tmp_path):
    data = context_doc()
    lines = split(tmp_path, data)
    events = [json.dumps({"action": "tusk-shard", "client_payload": json.loads(x)}) for x in lines]
    assert join(tmp_path, events).stdout == data
