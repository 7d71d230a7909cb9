"""The MCP server's audit log: append-only JSON Lines, hash-chained (MISSION M10).

Each line is a ``contracts.AuditRecord`` whose ``prev_hash`` is the ``hash``
of the line before (``GENESIS_HASH`` for the first) and whose ``hash`` is the
sha256 of its own canonical JSON without the ``hash`` key. Editing, deleting,
inserting or reordering a line breaks the chain at that line, which
``verify_chain`` names. The head hash, pinned somewhere the log's editors
cannot reach (the log issue, a run artifact), makes truncation visible too.

run-claude reads the summary helpers (``created_items``, ``refusals``) to write
up a run; they never trust a line the chain does not vouch for.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tusk.contracts.models import MESSAGE_KINDS, AuditDecision, AuditRecord

GENESIS_HASH = hashlib.sha256(b"tusk-audit-genesis-v1").hexdigest()


def canonical_json(value: Any) -> str:
    """One spelling per value: sorted keys, no spaces, UTF-8 kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def digest(value: Any) -> str:
    """sha256 of the canonical JSON of ``value`` (how arguments are recorded)."""
    return "sha256:" + hashlib.sha256(canonical_json(value).encode()).hexdigest()


def record_hash(fields: dict[str, Any]) -> str:
    """The hash a record carries: over every field except ``hash`` itself."""
    body = {key: value for key, value in fields.items() if key != "hash"}
    return hashlib.sha256(canonical_json(body).encode()).hexdigest()


def seal(fields: dict[str, Any]) -> tuple[str, str]:
    """``(hash, line)`` of a record whose ``fields`` are all but ``hash``, serialised once:
    the canonical JSON is hashed, and the hash is put in the place its key sorts to, so
    the line is exactly ``canonical_json`` of the whole record."""
    body = canonical_json(fields)
    hashed = hashlib.sha256(body.encode()).hexdigest()
    entry = f'"hash":"{hashed}"'
    before = [key for key in fields if key < "hash"]
    later = sorted(key for key in fields if key > "hash")
    if not before:
        line = "{" + entry + ("," + body[1:] if fields else "}")
    elif not later:
        line = body[:-1] + "," + entry + "}"
    else:
        # Keys are sorted, and a quote inside a value is escaped: this is the key itself.
        at = body.index(f',"{later[0]}":')
        line = body[:at] + "," + entry + body[at:]
    return hashed, line


@dataclass(frozen=True)
class ChainBreak:
    """The first line (1-based) where the chain does not hold, and why."""

    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


def iter_lines(path: Path) -> Iterator[tuple[int, str]]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            yield number, line.rstrip("\n")


def verify_lines(lines: Iterable[tuple[int, str]]) -> ChainBreak | None:
    """Check a chain line by line; None when every link holds."""
    prev_hash = GENESIS_HASH
    for expected_seq, (number, line) in enumerate(lines):
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as error:
            return ChainBreak(number, f"not JSON ({error.msg})")
        if not isinstance(raw, dict):
            return ChainBreak(number, "not a JSON object")
        try:
            record = AuditRecord.model_validate(raw)
        except ValidationError as error:
            return ChainBreak(number, f"not an audit record ({error.error_count()} problem(s))")
        if record.prev_hash != prev_hash:
            return ChainBreak(
                number,
                "prev_hash does not match the line before (line removed, inserted or reordered)",
            )
        if record_hash(raw) != record.hash:
            return ChainBreak(number, "hash does not match the content (line edited)")
        if record.seq != expected_seq:
            return ChainBreak(number, f"seq is {record.seq}, expected {expected_seq}")
        prev_hash = record.hash
    return None


def verify_chain(path: Path) -> ChainBreak | None:
    """The first broken link of the audit log at ``path``, or None when it holds."""
    return verify_lines(iter_lines(Path(path)))


def read_records(path: Path) -> list[AuditRecord]:
    """Every record, in order. Raises ``ValueError`` naming the first broken link."""
    path = Path(path)
    if not path.exists():
        return []
    broken = verify_chain(path)
    if broken is not None:
        raise ValueError(f"{path}: audit chain broken at {broken}")
    return [AuditRecord.model_validate_json(line) for _, line in iter_lines(path) if line]


class AuditLog:
    """Appends sealed records to one file; safe to share between threads.

    Reopening an existing log continues its chain, so a restarted server
    cannot silently start a second chain in the same file.
    """

    def __init__(self, path: Path, *, clock: Any = None) -> None:
        self.path = Path(path)
        self._clock = clock or (lambda: datetime.now(UTC))
        self._lock = threading.Lock()
        existing = read_records(self.path)
        self._seq = len(existing)
        self._head = existing[-1].hash if existing else GENESIS_HASH
        self._handle = self.path.open("a", encoding="utf-8")

    @property
    def head(self) -> str:
        return self._head

    def append(
        self,
        *,
        tool: str,
        kind: str,
        target: str,
        args: Any,
        decision: AuditDecision,
        code: str | None = None,
        reason: str | None = None,
        url: str | None = None,
        created: str | None = None,
        duration_ms: float = 0.0,
        args_digest: str | None = None,
        branch: str | None = None,
        head: str | None = None,
    ) -> AuditRecord:
        """Seal and write one record; ``args_digest`` is ``digest(args)`` when the caller
        already has it. O(1): one serialisation, one hash, one line appended. ``branch``
        and ``head`` (a push's) are written only when given, so other lines keep their
        spelling."""
        fields = {
            "time": self._clock().isoformat(),
            "tool": tool,
            "kind": kind,
            "target": target,
            "args_digest": args_digest or digest(args),
            "decision": decision,
            "code": code,
            "reason": reason,
            "url": url,
            "created": created,
            "duration_ms": round(duration_ms, 3),
        }
        if branch is not None:
            fields["branch"] = branch
        if head is not None:
            fields["head"] = head
        with self._lock:
            # Hash exactly the JSON that is written: verification re-hashes the parsed line.
            data = {**fields, "seq": self._seq, "prev_hash": self._head}
            hashed, line = seal(data)
            data["hash"] = hashed
            record = AuditRecord.model_validate(data)  # the contract, checked once
            self._handle.write(line + "\n")
            self._handle.flush()
            self._seq += 1
            self._head = hashed
        return record

    def close(self) -> None:
        self._handle.close()


# --------------------------------------------------------------------------- summaries


@dataclass(frozen=True)
class CreatedItem:
    kind: str
    url: str
    tool: str
    target: str
    branch: str | None = None  # a push: "created" or "moved" (None in older records)
    head: str | None = None  # a push: the commit it left the branch at


@dataclass(frozen=True)
class Refusal:
    tool: str
    target: str
    code: str
    reason: str


def created_items(records: Iterable[AuditRecord]) -> list[CreatedItem]:
    """What the run made on GitHub, in order (staged writes made nothing)."""
    return [
        CreatedItem(
            kind=r.created, url=r.url, tool=r.tool, target=r.target, branch=r.branch, head=r.head
        )
        for r in records
        if r.decision == "allowed" and r.created is not None and r.url
    ]


def refusals(records: Iterable[AuditRecord]) -> list[Refusal]:
    return [
        Refusal(tool=r.tool, target=r.target, code=r.code or "", reason=r.reason or "")
        for r in records
        if r.decision == "refused"
    ]


def head_hash(records: list[AuditRecord]) -> str:
    """The hash of the last record (``GENESIS_HASH`` for an empty log): pin it elsewhere."""
    return records[-1].hash if records else GENESIS_HASH


def created_messages(records: Iterable[AuditRecord]) -> list[CreatedItem]:
    """Comments, issues and PRs the run created: what A7's first self-check asks about."""
    return [item for item in created_items(records) if item.kind in MESSAGE_KINDS]


# --------------------------------------------------------------------------- records it vouches for

CONVERSATION = "conversation_record"  # the tool name of the line naming a conversation record


def with_conversation(
    text: str, records: list[AuditRecord], *, digest: str, target: str, time: datetime
) -> tuple[str, list[AuditRecord]]:
    """``text`` (an audit.jsonl whose ``records`` are ``read_records`` of it) with one more
    line sealed onto its chain: the run's conversation record, by its sha256 ``digest``.
    Nothing changes the file: the write-up posts the longer chain, so the head the log
    issue pins (and an attestation signs) covers the record. ``time`` is fixed by the
    caller so that a write-up done again seals the same line."""
    fields: dict[str, Any] = {
        "time": time.isoformat(),
        "tool": CONVERSATION,
        "kind": "record",
        "target": target,
        "args_digest": "sha256:" + digest,
        "decision": "allowed",
        "code": None,
        "reason": None,
        "url": None,
        "created": None,
        "duration_ms": 0.0,
        "seq": len(records),
        "prev_hash": head_hash(records),
    }
    hashed, line = seal(fields)
    record = AuditRecord.model_validate({**fields, "hash": hashed})
    if text and not text.endswith("\n"):
        text += "\n"
    return text + line + "\n", [*records, record]


def conversation_digest(records: Iterable[AuditRecord]) -> str | None:
    """The digest of the conversation record the chain vouches for (the last line naming
    one; a continuation's lines name none), or None when it holds none (a run that kept
    no record, or one written up before the chain held it)."""
    named = [
        r.args_digest.removeprefix("sha256:")
        for r in records
        if r.kind == "record" and r.tool == CONVERSATION
    ]
    return named[-1] if named else None
