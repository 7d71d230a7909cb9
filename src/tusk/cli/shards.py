"""``tusk shards split|join``: shard payloads by hand, for debugging a dispatch.

``split FILE`` prints one ``client_payload`` per line, exactly what the poller
dispatches. ``join FILE`` reads such lines (or whole dispatch bodies / events
with a ``client_payload``), in any order and with duplicates, and writes the
original bytes to stdout, or exits non-zero naming the job and the missing,
conflicting or corrupt shards.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

from tusk.contracts.models import JOBID_PATTERN, Shard
from tusk.contracts.ranges import int_in
from tusk.errors import InputError
from tusk.shards import codec as shards


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    split = sub.add_parser("split", help="encode a context file into shard payloads (JSON lines)")
    split.add_argument("file", help="the context document (JSON); - reads stdin")
    split.add_argument(
        "--max-bytes",
        type=int_in(shards.MIN_SHARD_BYTES, shards.MAX_SHARD_BYTES),
        default=shards.DEFAULT_MAX_BYTES,
        help=f"largest data string per shard (default {shards.DEFAULT_MAX_BYTES})",
    )
    split.add_argument("--jobid", help="job id; default: the document's own `jobid`")
    join = sub.add_parser("join", help="join shard payloads (JSON lines) back into the document")
    join.add_argument("file", help="JSON lines of shard payloads; - reads stdin")
    join.add_argument("--job", help="which job to join when the file holds several")
    join.add_argument(
        "--validate", action="store_true", help="also check the result is a context document"
    )


def run(args: argparse.Namespace) -> int:
    if args.action == "split":
        data = _read_bytes(args.file)
        jobid = args.jobid or jobid_of_document(data)
        for shard in shards.split_into_shards(jobid, shards.encode_context(data), args.max_bytes):
            sys.stdout.write(json.dumps(shards.shard_payload(shard), separators=(",", ":")) + "\n")
        sys.stdout.flush()
        return 0
    text = _read_bytes(args.file).decode("utf-8", errors="replace")
    result = join_lines(text.splitlines(), job=args.job)
    if args.validate:
        shards.validate_context_document(result, jobid=_only_job(text, args.job))
    _write_bytes(sys.stdout.buffer, result)
    return 0


def jobid_of_document(data: bytes) -> str:
    try:
        doc = json.loads(data)
    except ValueError:
        doc = None
    jobid = doc.get("jobid") if isinstance(doc, dict) else None
    if isinstance(jobid, str) and re.fullmatch(JOBID_PATTERN, jobid):
        return jobid
    raise InputError(
        "the document has no usable `jobid`",
        "Pass --jobid ID (lowercase letters, digits and dashes, 3-81 characters).",
    )


def join_lines(lines: Iterable[str], *, job: str | None = None) -> bytes:
    """Parse JSON lines of shards and join them; every fault is reported at once."""
    good: list[Shard] = []
    bad: list[shards.ShardError] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            good.append(shards.parse_shard(_payload_of(line, number), where=f"line {number}"))
        except shards.ShardError as error:
            bad.append(error)
    if job is not None:
        good = [s for s in good if s.jobid == job]
        bad = [e for e in bad if e.jobid in (None, job)]
    if not bad:
        return shards.join_shards(good)
    jobs = sorted({s.jobid for s in good} | {e.jobid for e in bad if e.jobid})
    jobid = jobs[0] if len(jobs) == 1 else job
    problems = [error.problem for error in bad]
    missing: tuple[int, ...] = ()
    conflicting: tuple[int, ...] = ()
    if good:
        try:
            shards.join_shards(good)
        except shards.ShardError as error:
            problems.append(error.problem)
            missing, conflicting = error.missing, error.conflicting
    raise shards.ShardError(
        jobid,
        "; ".join(problems),
        missing=missing,
        conflicting=conflicting,
        corrupt=[i for error in bad for i in error.corrupt],
    )


def _payload_of(line: str, number: int) -> Any:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as error:
        raise shards.ShardError(None, f"line {number} is not JSON ({error})") from None
    # Accept a dispatch body or a repository_dispatch event as well as a bare payload.
    if isinstance(value, dict) and "client_payload" in value:
        return value["client_payload"]
    return value


def _only_job(text: str, job: str | None) -> str | None:
    if job:
        return job
    for line in text.splitlines():
        try:
            value = _payload_of(line, 0)
        except shards.ShardError:
            continue
        if isinstance(value, dict) and isinstance(value.get("jobid"), str):
            return str(value["jobid"])
    return None


def _read_bytes(name: str) -> bytes:
    if name == "-":
        return sys.stdin.buffer.read()
    path = Path(name)
    if not path.is_file():
        raise InputError(
            f"{name}: no such file", "Give the path of an existing file, or - for stdin."
        )
    return path.read_bytes()


def _write_bytes(stream: BinaryIO, data: bytes) -> None:
    stream.write(data)
    stream.flush()
