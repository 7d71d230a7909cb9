"""merge-shards: download a job's shards, join and verify them, write the context file.

Shards still being uploaded by other runs are waited for, bounded and with
backoff (``tusk.github.backoff``); the clock and sleep are injected so tests run in
no real time. A job
that cannot be joined (timeout, missing, conflicting or corrupt shards) is a
``ShardError`` naming the job and the indices, which the edge records in the
control repository as a failure log issue (``tusk.shards.failures``): nothing
is dropped silently.
"""

from __future__ import annotations

import io
import json
import time
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tusk.contracts.models import Shard
from tusk.github.backoff import Backoff
from tusk.github.gateway import Gateway
from tusk.shards import codec as shards
from tusk.shards.transport import artifact_name, live_artifacts, write_context


@dataclass(frozen=True)
class WaitPolicy:
    """How long to wait for shards still uploading: ``timeout`` seconds in all,
    polling after ``first_delay`` seconds, doubling up to ``max_delay``."""

    timeout: float = 120.0
    first_delay: float = 2.0
    max_delay: float = 20.0


@dataclass
class Collected:
    """What the job's artifacts held so far. Downloads are cached by artifact id.

    A job dispatched twice (the poller re-ran after a crash) may have two
    *generations* of shards: each internally consistent, told apart by their
    checksum. Any complete generation can be merged; mixing them never is.
    """

    shards: list[Shard] = field(default_factory=list)
    corrupt: dict[int, str] = field(default_factory=dict)
    seen_ids: set[int] = field(default_factory=set)

    def generations(self, total: int) -> dict[str, list[Shard]]:
        """Shards of each checksum that agree on ``total``, by checksum."""
        found: dict[str, list[Shard]] = {}
        for shard in self.shards:
            if shard.total_shards == total:
                found.setdefault(shard.checksum, []).append(shard)
        return found

    def target(self, total: int, checksum: str | None) -> tuple[str | None, list[Shard]]:
        """The generation to merge: ``checksum``'s if given, else a complete one, else
        the one with the most indices."""
        generations = self.generations(total)
        if checksum is not None:
            return checksum, generations.get(checksum, [])
        if not generations:
            return None, []
        best = max(
            generations.items(), key=lambda item: (len({s.shard_index for s in item[1]}), item[0])
        )
        return best

    def missing(self, total: int, checksum: str | None) -> list[int]:
        _, chosen = self.target(total, checksum)
        present = {s.shard_index for s in chosen}
        return [i for i in range(total) if i not in present]


def shard_from_zip(blob: bytes, *, jobid: str, index: int) -> Shard:
    """The one shard payload inside an artifact zip; it must be the shard its name says."""
    where = f"artifact {artifact_name(jobid, index)}"
    try:
        with zipfile.ZipFile(io.BytesIO(blob)) as archive:
            members = [m for m in archive.namelist() if not m.endswith("/")]
            if len(members) != 1:
                raise shards.ShardError(
                    jobid, f"{where} holds {len(members)} files, not one shard", corrupt=[index]
                )
            text = archive.read(members[0]).decode("utf-8")
    except (zipfile.BadZipFile, UnicodeDecodeError, KeyError) as error:
        raise shards.ShardError(jobid, f"{where} is unreadable: {error}", corrupt=[index]) from None
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as error:
        raise shards.ShardError(jobid, f"{where} is not JSON: {error}", corrupt=[index]) from None
    shard = shards.parse_shard(payload, where=where)
    if shard.jobid != jobid or shard.shard_index != index:
        raise shards.ShardError(
            jobid,
            f"{where} holds shard {shard.shard_index} of job {shard.jobid}",
            corrupt=[index],
        )
    return shard


def collect(
    gateway: Gateway, repo: str, jobid: str, indices: Iterable[int], into: Collected
) -> Collected:
    """Download every not-yet-seen artifact of the given indices."""
    for index in indices:
        for artifact in live_artifacts(gateway, repo, artifact_name(jobid, index)):
            artifact_id = int(artifact["id"])
            if artifact_id in into.seen_ids:
                continue
            blob = gateway.download(f"/repos/{repo}/actions/artifacts/{artifact_id}/zip")
            into.seen_ids.add(artifact_id)
            try:
                into.shards.append(shard_from_zip(blob, jobid=jobid, index=index))
            except shards.ShardError as error:
                into.corrupt[index] = error.problem
    return into


def merge(
    gateway: Gateway,
    repo: str,
    jobid: str,
    total: int,
    context_file: Path,
    *,
    checksum: str | None = None,
    policy: WaitPolicy = WaitPolicy(),
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    log: Callable[[str], Any] = print,
) -> bytes:
    """Wait for, join, verify and write the job's context; raise ``ShardError`` if it can't.

    ``checksum`` (the dispatched shard's) pins the generation to merge; without
    it any complete generation will do.
    """
    wait = Backoff(
        policy.timeout, sleep=sleep, clock=clock, first=policy.first_delay, longest=policy.max_delay
    )
    collected = Collected()
    missing = list(range(total))
    while True:
        # Every index is listed once (duplicates included); later rounds only
        # look again for the indices still missing.
        collect(gateway, repo, jobid, missing, collected)
        missing = collected.missing(total, checksum)
        stuck = [i for i in missing if i in collected.corrupt]
        # A corrupt shard will not heal by waiting; a missing one may still be uploading.
        if not missing or stuck or wait.remaining <= 0:
            break
        log(f"job {jobid}: waiting for shards {shards.format_indices(missing)} of {total}")
        wait.wait()
    if missing:
        timed_out = not stuck
        raise failure(jobid, total, checksum, collected, timed_out=timed_out, waited=policy.timeout)
    for index in sorted(collected.corrupt):
        log(f"job {jobid}: ignoring a stray artifact: {collected.corrupt[index]}")
    _, chosen = collected.target(total, checksum)
    return write_context(jobid, chosen, context_file)


def failure(
    jobid: str,
    total: int,
    checksum: str | None,
    collected: Collected,
    *,
    timed_out: bool,
    waited: float,
) -> shards.ShardError:
    """One error naming every missing, conflicting and corrupt index of the job."""
    missing = collected.missing(total, checksum)
    corrupt = sorted(i for i in collected.corrupt if i in missing)
    problems = [collected.corrupt[i] for i in corrupt]
    chosen_checksum, _ = collected.target(total, checksum)
    elsewhere = sorted(
        {
            s.shard_index
            for s in collected.shards
            if s.checksum != chosen_checksum and s.shard_index in missing
        }
    )
    if elsewhere:
        problems.append(
            f"shards {shards.format_indices(elsewhere)} exist only with another checksum or "
            "total (another dispatch of this job, or corrupted)"
        )
    absent = [i for i in missing if i not in corrupt]
    if absent:
        wait = f" after waiting {waited:g}s" if timed_out else ""
        problems.append(f"shards {shards.format_indices(absent)} of {total} are missing{wait}")
    return shards.ShardError(
        jobid,
        "; ".join(problems),
        missing=[i for i in absent if i not in elsewhere],
        conflicting=elsewhere,
        corrupt=corrupt,
    )
