"""The shard codec: a context document in and out of ``repository_dispatch`` payloads.

A context document (JSON bytes) is gzip-compressed and base64-encoded into one
ASCII string; the string is cut into shards small enough for one dispatch
each (MISSION P7). Every shard carries the job id, its index, the total, the
encoding and the sha256 of the whole encoded string, so the receiving side can
put the job back together in any order, with duplicates, and tell a missing,
conflicting or corrupt shard from a complete job (MISSION A2).

Everything here is pure: bytes and models in, bytes and models out.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import hashlib
import json
import re
import zlib
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from pydantic import ValidationError

from tusk.contracts.models import (
    JOBID_PATTERN,
    MAX_ENCODED_CONTEXT,
    MIN_SHARD_DATA,
    SHARD_EVENT_TYPE,
    ContextDocument,
    Shard,
)
from tusk.errors import UserError

ENCODING: Final = "gzip+base64"
# gzip's own default; the benchmark compares against the same level.
COMPRESS_LEVEL = 9
DEFAULT_MAX_BYTES = 49152
# Largest data string per shard: with the other five keys the payload JSON
# stays under GitHub's 65,535-character client_payload limit.
MAX_SHARD_BYTES = 60000
MIN_SHARD_BYTES = MIN_SHARD_DATA
PAYLOAD_MAX_CHARS = 65535
PAYLOAD_MAX_KEYS = 10
EVENT_TYPE_MAX_CHARS = 100
_BASE64 = re.compile(r"[A-Za-z0-9+/=]*")
RETRY_HINT = (
    "Nothing was run for this job. Mention the bot again to dispatch it anew; "
    "`tusk shards join FILE` checks a set of shard payloads offline."
)


class ShardError(UserError):
    """A job's shards cannot be joined: names the job and the shards at fault."""

    def __init__(
        self,
        jobid: str | None,
        problem: str,
        *,
        missing: Iterable[int] = (),
        conflicting: Iterable[int] = (),
        corrupt: Iterable[int] = (),
        hint: str = RETRY_HINT,
    ) -> None:
        self.jobid = jobid
        self.problem = problem
        self.missing = tuple(sorted(set(missing)))
        self.conflicting = tuple(sorted(set(conflicting)))
        self.corrupt = tuple(sorted(set(corrupt)))
        who = f"job {jobid}" if jobid else "shards"
        super().__init__(f"{who}: {problem}", hint)

    @property
    def indices(self) -> tuple[int, ...]:
        """Every shard index at fault, whatever the fault."""
        return tuple(sorted({*self.missing, *self.conflicting, *self.corrupt}))


# --------------------------------------------------------------------------- encoding


def encode_context(doc_json_bytes: bytes) -> str:
    """gzip (fixed mtime, so the same document always encodes the same) + base64."""
    compressed = gzip.compress(doc_json_bytes, compresslevel=COMPRESS_LEVEL, mtime=0)
    return base64.b64encode(compressed).decode("ascii")


def decode_context(encoded: str, *, jobid: str | None = None) -> bytes:
    """Undo ``encode_context``; a malformed string raises ``ShardError``."""
    try:
        compressed = base64.b64decode(encoded, validate=True)
        # One gzip member, decompressed into a buffer sized from its trailer (ISIZE,
        # capped by deflate's best ratio): one allocation instead of a doubling series.
        size_hint = min(int.from_bytes(compressed[-4:], "little"), 1032 * len(compressed))
        return zlib.decompress(compressed, wbits=31, bufsize=max(size_hint, 1))
    except (binascii.Error, ValueError, OSError, EOFError, zlib.error) as error:
        raise ShardError(jobid, f"the joined data does not decode as {ENCODING}: {error}") from None


def checksum_of(encoded: str) -> str:
    return "sha256:" + hashlib.sha256(encoded.encode("ascii")).hexdigest()


# --------------------------------------------------------------------------- splitting


def split_into_shards(jobid: str, encoded: str, max_bytes: int = DEFAULT_MAX_BYTES) -> list[Shard]:
    """Cut ``encoded`` into shards of at most ``max_bytes`` characters of data.

    The cut falls on multiples of 4 so every shard is whole base64 on its own.
    """
    if not MIN_SHARD_BYTES <= max_bytes <= MAX_SHARD_BYTES:
        raise UserError(
            f"shard size {max_bytes} is out of range",
            f"Use {MIN_SHARD_BYTES}..{MAX_SHARD_BYTES} bytes (limits.shard_bytes in tusk.yml); "
            "larger shards would not fit one repository_dispatch.",
        )
    if not encoded.isascii():
        raise UserError("the encoded context is not ASCII", "Pass the output of encode_context.")
    step = max_bytes - max_bytes % 4
    total = max(1, -(-len(encoded) // step))
    if len(encoded) > MAX_ENCODED_CONTEXT:
        raise UserError(
            f"the encoded context is {len(encoded)} characters; a job carries at most "
            f"{MAX_ENCODED_CONTEXT}",
            "The thread's context is far too large to dispatch; the trigger stays unread.",
        )
    checksum = checksum_of(encoded)
    return [
        Shard(
            jobid=jobid,
            shard_index=index,
            total_shards=total,
            encoding=ENCODING,
            checksum=checksum,
            data=encoded[index * step : (index + 1) * step],
        )
        for index in range(total)
    ]


def shard_payload(shard: Shard) -> dict[str, Any]:
    """The ``client_payload`` of one shard's dispatch."""
    return shard.model_dump(mode="json")


def dispatch_body(shard: Shard) -> dict[str, Any]:
    """The whole ``POST /repos/{o}/{r}/dispatches`` body for one shard."""
    return {"event_type": SHARD_EVENT_TYPE, "client_payload": shard_payload(shard)}


def payload_limit_problems(body: Mapping[str, Any]) -> list[str]:
    """Every way a dispatch body breaks GitHub's documented limits (empty when fine)."""
    problems = []
    event_type = str(body.get("event_type", ""))
    if not 1 <= len(event_type) <= EVENT_TYPE_MAX_CHARS:
        problems.append(f"event_type has {len(event_type)} characters (1..100 allowed)")
    payload = body.get("client_payload", {})
    if len(payload) > PAYLOAD_MAX_KEYS:
        problems.append(f"client_payload has {len(payload)} top-level keys (10 allowed)")
    size = len(json.dumps(payload, separators=(",", ":")))
    if size > PAYLOAD_MAX_CHARS:
        problems.append(f"client_payload is {size} characters of JSON (65,535 allowed)")
    return problems


# --------------------------------------------------------------------------- parsing


def parse_shard(payload: Any, *, where: str = "payload") -> Shard:
    """Validate one ``client_payload``; anything malformed is a corrupt shard."""
    try:
        return Shard.model_validate(payload)
    except ValidationError as error:
        jobid, index = best_guess_identity(payload)
        problems = "; ".join(
            f"{'.'.join(str(p) for p in item['loc']) or '(top level)'}: {item['msg']}"
            for item in error.errors()
        )
        raise ShardError(
            jobid,
            f"{where} is not a valid shard ({problems})",
            corrupt=[index] if index is not None else [],
        ) from None


def best_guess_identity(payload: Any) -> tuple[str | None, int | None]:
    """The job id and index a broken payload claims, for a useful error message."""
    if not isinstance(payload, Mapping):
        return None, None
    jobid = payload.get("jobid")
    index = payload.get("shard_index")
    # Only a well-formed id is repeated: a hostile one (300 characters) would not fit
    # the failure record's title and says nothing a person can use.
    return (
        jobid if isinstance(jobid, str) and re.fullmatch(JOBID_PATTERN, jobid) else None,
        index if isinstance(index, int) and not isinstance(index, bool) else None,
    )


# --------------------------------------------------------------------------- joining


def group_by_job(shards: Iterable[Shard]) -> dict[str, list[Shard]]:
    groups: dict[str, list[Shard]] = defaultdict(list)
    for shard in shards:
        groups[shard.jobid].append(shard)
    return dict(groups)


def join_shards(shards: Iterable[Shard]) -> bytes:
    """Join one job's shards (any order, identical duplicates allowed) into the document.

    Raises ``ShardError`` naming the job and every missing, conflicting or
    corrupt shard index.
    """
    groups = group_by_job(shards)
    if not groups:
        raise ShardError(None, "no shards to join")
    if len(groups) > 1:
        raise ShardError(
            None,
            f"shards of {len(groups)} jobs were mixed: {', '.join(sorted(groups))}",
            hint="Join one job at a time (`tusk shards join --job ID FILE`).",
        )
    ((jobid, group),) = groups.items()
    return decode_context(assemble_job(jobid, group), jobid=jobid)


def assemble_job(jobid: str, shards: Sequence[Shard]) -> str:
    """Check one job's shards and return the verified encoded string."""
    by_index: dict[int, Shard] = {}
    conflicting: set[int] = set()
    for shard in shards:
        seen = by_index.setdefault(shard.shard_index, shard)
        if seen != shard:
            conflicting.add(shard.shard_index)

    problems: list[str] = []
    corrupt = {i for i, shard in by_index.items() if not _BASE64.fullmatch(shard.data)}
    if corrupt:
        problems.append(f"shards {format_indices(corrupt)} hold characters that are not base64")
    # Shards must agree on what the whole is; the value most shards claim is
    # taken as right and the outliers are named.
    for field in ("total_shards", "checksum", "encoding"):
        outliers = _outliers(by_index.values(), field)
        if outliers:
            corrupt |= outliers
            problems.append(
                f"shards {format_indices(outliers)} disagree with the others on {field}"
            )
    total = _majority(by_index.values(), "total_shards")
    out_of_range = {i for i in by_index if i >= total}
    if out_of_range:
        corrupt |= out_of_range
        problems.append(
            f"shard indices {format_indices(out_of_range)} are beyond total_shards={total}"
        )
    if conflicting:
        problems.append(
            f"shards {format_indices(conflicting)} were delivered twice with different content"
        )
    missing = [i for i in range(total) if i not in by_index]
    if missing:
        problems.append(f"shards {format_indices(missing)} of {total} are missing")
    if problems:
        raise ShardError(
            jobid, "; ".join(problems), missing=missing, conflicting=conflicting, corrupt=corrupt
        )

    ordered = [by_index[i] for i in range(total)]
    encoded = "".join(shard.data for shard in ordered)
    if checksum_of(encoded) != ordered[0].checksum:
        raise ShardError(
            jobid,
            "the joined data does not match its checksum: one of shards "
            f"{format_indices(range(total))} is corrupt",
            corrupt=range(total),
        )
    return encoded


def _majority(shards: Iterable[Shard], field: str) -> Any:
    counts: dict[Any, int] = defaultdict(int)
    for shard in shards:
        counts[getattr(shard, field)] += 1
    return max(counts.items(), key=lambda item: (item[1], str(item[0])))[0]


def _outliers(shards: Iterable[Shard], field: str) -> set[int]:
    shards = list(shards)
    if not shards:
        return set()
    expected = _majority(shards, field)
    return {s.shard_index for s in shards if getattr(s, field) != expected}


def format_indices(indices: Iterable[int]) -> str:
    """``[0, 1, 2, 5]`` → ``"0-2, 5"``: short even for hundreds of shards."""
    runs: list[list[int]] = []
    for index in sorted(set(indices)):
        if runs and index == runs[-1][1] + 1:
            runs[-1][1] = index
        else:
            runs.append([index, index])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


# --------------------------------------------------------------------------- the document


def validate_context_document(
    doc_json_bytes: bytes, *, jobid: str | None = None
) -> ContextDocument:
    """Parse the joined bytes as a ``ContextDocument``; when ``jobid`` is given the
    document must belong to it (a shard relabelled to another job is corrupt)."""
    try:
        doc = ContextDocument.model_validate_json(doc_json_bytes)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise ShardError(
            jobid,
            f"the joined data is not a valid context document ({error.error_count()} problem(s); "
            f"first: {where}: {first['msg']})",
        ) from None
    if jobid is not None and doc.jobid != jobid:
        raise ShardError(
            jobid, f"the shards say job {jobid} but the document inside is job {doc.jobid}"
        )
    return doc
