"""``tusk record`` against the local GitHub (the recorder cannot reach github.com in
tests): what it writes is the recordings' normalised form, and replays cleanly."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from tusk.cli.record import record
from tusk.sandbox.recorded import load_folder
from tusk.sandbox.recorded_replay import fields_read, replay
from tusk.sandbox.recorded_seeds import RECORD_BASE, RECORDED_BY_TUSK

READS = fields_read(Path(__file__).resolve().parents[2] / "src" / "tusk")


def test_the_recorder_writes_what_the_replay_reads_and_the_stand_in_passes_it(
    local_github: Any, tmp_path: Path
) -> None:
    """``tusk record`` against the local GitHub (no network here): its recordings are in
    the normalised form, hold no host, token or real name, and replay cleanly."""
    world = copy.deepcopy(RECORD_BASE)
    world["users"].append({"login": "maria"})
    world["tokens"] = {"maria-token": {"user": "maria", "scopes": ["repo", "notifications"]}}
    world["repos"] = [
        {"name": "maria/scratch", "files": {"README.md": "# scratch"}},
    ]
    local_github.load(world)
    written = record(local_github.gateway("maria-token"), repo="maria/scratch", out=tmp_path)
    assert {p.parent.name for p in written} == set(RECORDED_BY_TUSK)
    text = "".join(p.read_text(encoding="utf-8") for p in written)
    assert local_github.url not in text and "127.0.0.1" not in text
    assert "maria" not in text and "scratch" not in text and "maria-token" not in text
    recorded = load_folder(tmp_path)
    comments = recorded["tusk-issue-comments"]
    assert [(e.method, e.status) for e in comments][:3] == [("POST", 201)] * 3
    assert comments[3].headers["link"].startswith("<https://api.github.com/repositories/")
    closed = next(e for e in comments if e.method == "GET" and e.path.endswith("/issues/1"))
    assert closed.body["closed_by"]["login"] == "tusk-fixture-user"
    for scenario, exchanges in recorded.items():
        replayed = replay(scenario, exchanges, reads=READS)
        assert all(r.served for r in replayed), scenario
        assert [p for r in replayed for p in r.problems] == [], scenario
