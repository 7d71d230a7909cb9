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

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tusk.audit.chain import ChainBreak, verify_lines
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
