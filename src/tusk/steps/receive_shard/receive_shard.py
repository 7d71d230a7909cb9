"""receive-shard: take one dispatched shard in, and tell whether its job is complete.

A one-shard job is decoded and written as the context file at once. Any other
shard is written to a file for ``actions/upload-artifact`` to store as
``<jobid>-shard-<index>``; after the upload, ``first_missing_index`` lists
the job's artifacts over REST and the job is complete once every index is
there. Reading the dispatch, naming and listing the artifacts and writing the
context are shared with merge-shards (``tusk.shards.transport``).

Two deliveries may both see their job complete at the same moment; that is
fine: merge-shards joins the same bytes in both, and the log issue claim
downstream lets exactly one run go on (ENGINEERING §2).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from tusk.contracts.models import Shard
from tusk.github.gateway import Gateway
from tusk.shards import codec as shards
from tusk.shards.transport import artifact_name, live_artifacts, write_context


@dataclass(frozen=True)
class Received:
    shard: Shard
    complete: bool
    context_file: Path | None = None
    artifact_name: str | None = None
    artifact_file: Path | None = None


def receive(shard: Shard, *, work_dir: Path, context_file: Path) -> Received:
    """Decode a one-shard job straight away; otherwise write the shard for upload."""
    if shard.total_shards == 1:
        write_context(shard.jobid, [shard], context_file)
        return Received(shard, complete=True, context_file=context_file)
    name = artifact_name(shard.jobid, shard.shard_index)
    work_dir.mkdir(parents=True, exist_ok=True)
    target = work_dir / f"{name}.json"
    target.write_text(json.dumps(shards.shard_payload(shard), separators=(",", ":")) + "\n")
    return Received(shard, complete=False, artifact_name=name, artifact_file=target)


def first_missing_index(
    gateway: Gateway, repo: str, jobid: str, total: int, *, own_index: int | None = None
) -> int | None:
    """The highest index of the job with no stored artifact yet, or None when all are there.

    Shards mostly arrive in order, so looking from the top finds a gap with
    one request for every delivery but the last (about 2N requests per job,
    not N²). ``own_index`` was just uploaded by this very run and is skipped.
    """
    for index in range(total - 1, -1, -1):
        if index == own_index:
            continue
        if not live_artifacts(gateway, repo, artifact_name(jobid, index)):
            return index
    return None
