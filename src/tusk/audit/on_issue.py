"""The audit log kept on its log issue, and verified from there alone.

The run posts its ``audit.jsonl`` on the log issue as one or more collapsed
comments. Each holds a contiguous slice of the file, byte for byte, in a code
block, under a hidden ``tusk:audit`` marker saying which part it is, how many
there are, how many records and which chain head the whole has. Slices end at
line ends where a line fits; a line longer than a comment is cut and its
continuation starts the next part (``open`` in the marker), so nothing is
re-encoded and the hashes still hold.

``tusk audit verify LOG-ISSUE-URL`` reads the comments back, joins the parts of
the latest complete set, and verifies the chain (``tusk.audit.chain.verify_lines``)
and that it ends at the head and count the markers announced.

Pure: ``audit_comments`` (compose) and ``read_audit_parts`` (parse + join).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from tusk.audit.chain import ChainBreak, conversation_digest, verify_lines
from tusk.contracts.models import AuditRecord
from tusk.text.markers import parse_markers, render_marker

BODY_LIMIT = 65_536
FRAME_ROOM = 1_200  # marker, heading, <details> and the fence around each slice
OPEN_FENCE = "```jsonl\n"
CLOSE_FENCE = "```\n"


def utf16_len(text: str) -> int:
    """Length as GitHub counts a body (UTF-16 units); never less than ``len``."""
    return len(text.encode("utf-16-le")) // 2


def slices(text: str, room: int) -> list[str]:
    """``text`` cut into pieces of at most ``room`` UTF-16 units, at line ends when
    a line fits; ``"".join(slices(...)) == text``."""
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    for line in text.splitlines(keepends=True):
        while utf16_len(line) > room:  # one record longer than a comment: cut it
            if current:
                pieces.append("".join(current))
                current, size = [], 0
            cut = room
            while utf16_len(line[:cut]) > room:
                cut -= 1
            pieces.append(line[:cut])
            line = line[cut:]
        width = utf16_len(line)
        if current and size + width > room:
            pieces.append("".join(current))
            current, size = [], 0
        current.append(line)
        size += width
    if current:
        pieces.append("".join(current))
    return pieces


def audit_comments(
    text: str,
    *,
    jobid: str,
    run: str,
    records: int,
    head: str,
    log_url: str,
    limit: int = BODY_LIMIT,
    transcript: str | None = None,
    conversation: str | None = None,
) -> list[str]:
    """The comments that carry ``text`` (an audit.jsonl) on the log issue, in order.
    ``transcript``: the digest of the run's transcript comments (``transcript_digest``),
    named in every part's marker, so that verifying the audit checks them too;
    ``conversation``: the digest of the run's conversation record, which a later run
    on the thread resumes from only when it matches."""
    if "\n" not in text and text:
        text += "\n"
    pieces = slices(text, limit - FRAME_ROOM) or [""]
    total = len(pieces)
    bodies = []
    first_record = 1
    for index, piece in enumerate(pieces, start=1):
        lines = piece.count("\n")
        last_record = first_record + max(lines - 1, 0)
        marker = render_marker(
            "audit",
            {
                "jobid": jobid,
                "run": run,
                "part": index,
                "parts": total,
                "records": records,
                "head": head,
                "open": not piece.endswith("\n") and bool(piece),
                **({"transcript": transcript} if transcript else {}),
                **({"conversation": conversation} if conversation else {}),
            },
        )
        span = f"records {first_record}–{last_record} of {records}" if records else "no records"
        bodies.append(
            f"{marker}\n"
            f"### 🔏 Audit log · part {index} of {total}\n\n"
            f"Every call the agent made to the MCP server, hash-chained. Verify from this issue "
            f"alone: `tusk audit verify {log_url}`\n\n"
            f"<details><summary>audit.jsonl: {span}</summary>\n\n"
            f"{OPEN_FENCE}{piece}{'' if piece.endswith(chr(10)) or not piece else chr(10)}"
            f"{CLOSE_FENCE}\n</details>\n"
        )
        first_record = last_record + (1 if piece.endswith("\n") else 0)
    return bodies


# --------------------------------------------------------------------------- reading back


@dataclass(frozen=True)
class AuditSet:
    """One run's audit parts found on a log issue."""

    jobid: str
    run: str
    parts: int
    records: int
    head: str
    bodies: dict[int, str]
    edited: tuple[int, ...] = ()
    transcript: str | None = None  # the digest of the run's transcript comments
    conversation: str | None = None  # the digest of the run's conversation record

    @property
    def complete(self) -> bool:
        return sorted(self.bodies) == list(range(1, self.parts + 1))


@dataclass(frozen=True)
class Verdict:
    ok: bool
    records: int
    head: str
    message: str
    chain_break: ChainBreak | None = None


def _slice_of(body: str, marker: Mapping[str, Any]) -> str | None:
    start = body.find(OPEN_FENCE)
    end = body.rfind("\n" + CLOSE_FENCE)
    if start == -1 or end == -1 or end + 1 < start + len(OPEN_FENCE):
        return None
    piece = body[start + len(OPEN_FENCE) : end + 1]
    if marker.get("open") and piece.endswith("\n"):
        piece = piece[:-1]
    return piece


def audit_sets(comments: Iterable[Mapping[str, Any]]) -> list[AuditSet]:
    """Every run's audit parts among ``comments`` (GitHub issue comments), oldest first."""
    sets: dict[tuple[str, str], dict[str, Any]] = {}
    for comment in comments:
        body = str(comment.get("body") or "")
        for marker in parse_markers(body, "audit"):
            try:
                key = (str(marker["jobid"]), str(marker["run"]))
                part, parts = int(marker["part"]), int(marker["parts"])
                records, head = int(marker["records"]), str(marker["head"])
            except (KeyError, TypeError, ValueError):
                continue
            found = sets.setdefault(
                key,
                {
                    "parts": parts,
                    "records": records,
                    "head": head,
                    "bodies": {},
                    "edited": [],
                    "transcript": marker.get("transcript"),
                    "conversation": marker.get("conversation"),
                },
            )
            if (parts, records, head) != (found["parts"], found["records"], found["head"]):
                continue  # a part of another shape cannot belong to this set
            found["bodies"].setdefault(part, (body, marker))
            if comment.get("updated_at") and comment.get("updated_at") != comment.get("created_at"):
                found["edited"].append(part)
    return [
        AuditSet(
            jobid=key[0],
            run=key[1],
            parts=found["parts"],
            records=found["records"],
            head=found["head"],
            bodies={part: body for part, (body, _) in found["bodies"].items()},
            edited=tuple(sorted(found["edited"])),
            transcript=str(found["transcript"]) if found["transcript"] else None,
            conversation=str(found["conversation"]) if found["conversation"] else None,
        )
        for key, found in sets.items()
    ]


def joined_text(audit_set: AuditSet) -> str | None:
    """The audit.jsonl the parts hold, or None when a part cannot be read."""
    pieces = []
    for part in range(1, audit_set.parts + 1):
        body = audit_set.bodies[part]
        marker = next(m for m in parse_markers(body, "audit") if int(m["part"]) == part)
        piece = _slice_of(body, marker)
        if piece is None:
            return None
        pieces.append(piece)
    return "".join(pieces)


def verify_set(audit_set: AuditSet) -> Verdict:
    """Verify one complete set: the chain holds and ends where the markers said."""
    from tusk.audit.chain import GENESIS_HASH
    from tusk.contracts.models import AuditRecord

    text = joined_text(audit_set)
    if text is None:
        return Verdict(False, 0, "", "a part's code block is damaged (edited?)")
    lines = [line for line in text.split("\n") if line]
    broken = verify_lines(enumerate(lines, start=1))
    if broken is not None:
        message = f"chain broken at record {broken.line}: {broken.reason}"
        return Verdict(False, len(lines), "", message, broken)
    head = AuditRecord.model_validate_json(lines[-1]).hash if lines else GENESIS_HASH
    if len(lines) != audit_set.records or head != audit_set.head:
        return Verdict(
            False,
            len(lines),
            head,
            f"the parts hold {len(lines)} record(s) ending at {head}, but announced "
            f"{audit_set.records} ending at {audit_set.head} (records removed from the end?)",
        )
    return Verdict(True, len(lines), head, "chain intact")


def verify_comments(comments: Sequence[Mapping[str, Any]]) -> tuple[AuditSet | None, Verdict]:
    """Verify the latest complete audit set among a log issue's comments."""
    found = audit_sets(comments)
    complete = [s for s in found if s.complete]
    if not complete:
        if found:
            missing = [p for p in range(1, found[-1].parts + 1) if p not in found[-1].bodies]
            return found[-1], Verdict(
                False, 0, "", f"audit part(s) {', '.join(map(str, missing))} missing"
            )
        return None, Verdict(False, 0, "", "no audit log on this issue")
    chosen = complete[-1]
    verdict = verify_set(chosen)
    if verdict.ok:
        wrong = conversation_problem(comments, chosen.jobid)
        if wrong is not None:
            return chosen, Verdict(False, verdict.records, verdict.head, wrong)
    if verdict.ok and chosen.transcript is not None:
        posted = transcript_digest(posted_transcript(comments, chosen))
        if posted != chosen.transcript:
            message = (
                "the transcript on this issue is not the one the audit names (digest "
                f"{posted}, not {chosen.transcript}): a transcript comment was changed, "
                "added or removed after it was posted"
            )
            return chosen, Verdict(False, verdict.records, verdict.head, message)
    return chosen, verdict


# The run's transcript comments, as run-claude's write-up marks them.
TRANSCRIPT_PART = "transcript-"


def transcript_digest(texts: Sequence[str]) -> str:
    """The digest the audit's markers name: of each transcript comment's text, in order."""
    return hashlib.sha256("\0".join(texts).encode("utf-8")).hexdigest()


def posted_transcript(comments: Iterable[Mapping[str, Any]], audit_set: AuditSet) -> list[str]:
    """The texts of the transcript comments of ``audit_set``'s run, in part order."""
    found: dict[int, str] = {}
    for comment in comments:
        head, _, text = str(comment.get("body") or "").partition("\n")
        markers = parse_markers(head, "writeup")
        marker = markers[0] if markers else None
        if marker is None or marker.get("jobid") != audit_set.jobid:
            continue
        part = str(marker.get("part") or "")
        if marker.get("nonce") != audit_set.run or not part.startswith(TRANSCRIPT_PART):
            continue
        index = part[len(TRANSCRIPT_PART) :]
        if index.isdigit():
            found.setdefault(int(index), text)
    return [found[i] for i in sorted(found)]


# ------------------------------------------------------------------ the conversation record

RECORD_PART: Literal["conversation"] = "conversation"  # its write-up part and marker
RECORD_OPEN = "```text\n"
RECORD_CLOSE = "\n```"
MAX_RECORD_BYTES = 4_000_000  # what a record may inflate to when it is read back


def record_bytes(body: str) -> bytes | str:
    """The canonical bytes a conversation record comment holds (gzip, base64 in a code
    block), or what is wrong with it; its digest is of these bytes."""
    start = body.find(RECORD_OPEN)
    end = body.find(RECORD_CLOSE, start + len(RECORD_OPEN)) if start != -1 else -1
    if start == -1 or end == -1:
        return "its comment holds no record"
    try:
        text = "".join(body[start + len(RECORD_OPEN) : end].split())
        packed = base64.b64decode(text, validate=True)
        return zlib.decompressobj(wbits=31).decompress(packed, MAX_RECORD_BYTES)
    except (binascii.Error, zlib.error, ValueError):
        return "its comment cannot be read"


def chain_records(audit_set: AuditSet) -> list[AuditRecord]:
    """The records a complete set's parts hold (verify the set first)."""
    text = joined_text(audit_set) or ""
    return [AuditRecord.model_validate_json(line) for line in text.split("\n") if line]


@dataclass(frozen=True)
class HeldRecord:
    """The conversation record a run's audit chain vouches for: its digest (None: the
    run kept none, or was written up before the chain held it) and the run's nonce."""

    digest: str | None
    run: str = ""


def held_record(comments: Sequence[Mapping[str, Any]], jobid: str) -> HeldRecord | str:
    """The record the chain of ``jobid``'s run holds, from the run's own audit set (the
    first complete one: an apply's or undo's continuation comes later and names none),
    or what is wrong: a chain that does not verify, or a marker that names another
    digest than the chain holds (edited)."""
    sets = [s for s in audit_sets(comments) if s.jobid == jobid and s.complete]
    if not sets:
        return HeldRecord(None)
    own = sets[0]
    verdict = verify_set(own)
    if not verdict.ok:
        return f"its audit chain does not verify ({verdict.message})"
    held = conversation_digest(chain_records(own))
    if held is None:
        return HeldRecord(None, own.run)
    named = {
        marker.get("conversation")
        for body in own.bodies.values()
        for marker in parse_markers(body, "audit")
    }
    if named != {held}:
        shown = ", ".join(sorted(str(name) for name in named))
        return (
            f"its audit markers name conversation record {shown}, but its chain holds "
            f"{held}: a marker was edited"
        )
    return HeldRecord(held, own.run)


def conversation_problem(comments: Sequence[Mapping[str, Any]], jobid: str) -> str | None:
    """What is wrong with the conversation record of ``jobid``'s run on a log issue: the
    record comment must hash to the digest the run's chain holds, and the markers name
    the same. None when all agree, or the run's chain holds no record."""
    held = held_record(comments, jobid)
    if isinstance(held, str):
        return "conversation record: " + held.removeprefix("its ")
    if held.digest is None:
        return None
    bodies = [
        text
        for comment in comments
        for head, _, text in [str(comment.get("body") or "").partition("\n")]
        if (marker := (parse_markers(head, "writeup") or [{}])[0]).get("jobid") == jobid
        and marker.get("nonce") == held.run
        and marker.get("part") == RECORD_PART
    ]
    if not bodies:
        return "the conversation record the audit chain names is not on this issue"
    found = record_bytes(bodies[0])
    if isinstance(found, str) or hashlib.sha256(found).hexdigest() != held.digest:
        return (
            "the conversation record on this issue is not the one the audit chain names "
            f"({held.digest}): its comment was changed after it was posted"
        )
    return None
