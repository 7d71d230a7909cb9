"""The pure codec of the state issues: their kinds, titles and markers, and the
history and memory entries each comment holds (``tusk.issues.state`` does the I/O).

A state issue counts only when the bot (or a trusted author) wrote it; one whose
body lost its marker is read as *damaged*, its generation inferred from the
issues around it."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from tusk.errors import UserError
from tusk.text.markers import first_marker, is_trusted_author, render_marker

StateKind = Literal["history", "memory", "blocklist"]
EntryKind = Literal["history", "memory"]

TITLES: dict[StateKind, str] = {
    "history": "Tusk history",
    "memory": "Tusk memory",
    "blocklist": "Tusk blocklist",
}
MAX_BODY_CHARS = 65536
_ENTRY_RE = re.compile(
    r"<!-- tusk:entry \{.*?\} -->\n(?P<fence>`{3,})text\n(?P<text>.*)\n(?P=fence)", re.S
)


class StateError(UserError):
    """A state issue is missing, unreadable or cannot be written."""


class StateEntry(BaseModel):
    """One history or memory entry, as read back from its comment."""

    model_config = ConfigDict(frozen=True)

    text: str
    author: str
    created_at: datetime
    url: str
    jobid: str | None = None
    id: int = 0
    nonce: str | None = None


@dataclass(frozen=True)
class StateIssue:
    kind: StateKind
    number: int
    generation: int
    comments: int
    open: bool
    url: str
    body: str
    previous: int | None = None
    damaged: bool = False  # the body lost its marker (its generation is inferred)
    labelled: bool = True  # False when only the search found it: its label was removed
    duplicate: bool = False  # closed as the loser of a creation race


# --------------------------------------------------------------------------- pure: markers


def state_marker(
    kind: StateKind, generation: int, previous: int | None = None, nonce: str | None = None
) -> str:
    data: dict[str, Any] = {"kind": kind, "generation": generation}
    if previous is not None:
        data["previous"] = previous
    if nonce is not None:
        data["nonce"] = nonce
    return render_marker("state", data)


def parse_state_issue(
    item: dict[str, Any], *, kind: StateKind, bot: str, trusted: Iterable[str] = ()
) -> StateIssue | None:
    """The state issue ``item`` is, or None when it is not a trusted ``kind`` issue."""
    if "pull_request" in item or not trusted_author(item, bot=bot, trusted=trusted):
        return None
    marker = first_marker(item.get("body"), "state")
    if not marker or marker.get("kind") != kind:
        return None
    generation = marker.get("generation")
    previous = marker.get("previous")
    if not isinstance(generation, int) or generation < 1:
        return None
    return StateIssue(
        kind=kind,
        number=int(item["number"]),
        generation=generation,
        comments=int(item.get("comments") or 0),
        open=item.get("state") == "open",
        url=str(item.get("html_url") or ""),
        body=str(item.get("body") or ""),
        previous=previous if isinstance(previous, int) else None,
    )


def current_issue(candidates: Iterable[StateIssue]) -> StateIssue | None:
    """The highest generation; among twins created in a race, the lowest number."""
    ordered = sorted(
        (issue for issue in candidates if not issue.duplicate),
        key=lambda issue: (-issue.generation, issue.number),
    )
    return ordered[0] if ordered else None


def damaged_state_issue(
    item: dict[str, Any],
    *,
    kind: StateKind,
    bot: str,
    trusted: Iterable[str] = (),
    labelled: bool,
) -> StateIssue | None:
    """A state issue of ``kind`` whose body lost its marker: the bot wrote it, and it
    carries the kind's label (``labelled``) or its title. Generation is set later."""
    if "pull_request" in item or not trusted_author(item, bot=bot, trusted=trusted):
        return None
    body = item.get("body")
    marker = first_marker(body, "state")
    if marker is not None and marker.get("kind") in TITLES and marker.get("kind") != kind:
        return None  # another kind's state issue, intact
    if first_marker(body, "job") is not None or first_marker(body, "go-away") is not None:
        return None  # a log issue someone put the label on, not a state issue
    if not labelled and not str(item.get("title") or "").startswith(TITLES[kind]):
        return None
    return StateIssue(
        kind=kind,
        number=int(item["number"]),
        generation=0,
        comments=int(item.get("comments") or 0),
        open=item.get("state") == "open",
        url=str(item.get("html_url") or ""),
        body=str(item.get("body") or ""),
        damaged=True,
        labelled=labelled,
        duplicate=item.get("state_reason") == "duplicate",
    )


def state_issues_in(
    items: Iterable[dict[str, Any]],
    *,
    kind: StateKind,
    bot: str,
    trusted: Iterable[str] = (),
    labelled: bool,
) -> list[StateIssue]:
    """The ``kind`` issues among ``items``, intact or damaged; ``labelled`` when the
    listing was by the kind's label (else by a search for its title)."""
    found = []
    for item in items:
        issue = parse_state_issue(item, kind=kind, bot=bot, trusted=trusted)
        if issue is not None:
            issue = replace(
                issue,
                labelled=labelled,
                duplicate=item.get("state_reason") == "duplicate",
            )
        else:
            issue = damaged_state_issue(
                item, kind=kind, bot=bot, trusted=trusted, labelled=labelled
            )
        if issue is not None:
            found.append(issue)
    return found


def with_generations(issues: list[StateIssue]) -> list[StateIssue]:
    """Damaged issues get the generation after the last intact one before them: issues
    of one kind are created in generation order, so numbers tell the order."""
    out: list[StateIssue] = []
    last = 0
    for issue in sorted(issues, key=lambda i: i.number):
        if issue.damaged:
            issue = replace(issue, generation=last + 1)
        if not issue.duplicate:
            last = max(last, issue.generation)
        out.append(issue)
    return out


def trusted_author(item: dict[str, Any], *, bot: str, trusted: Iterable[str]) -> bool:
    author = (item.get("user") or {}).get("login")
    # No repo argument: in the control repository anyone may comment, so only
    # authorship vouches for a state marker.
    if is_trusted_author(author=author, bot=bot):
        return True
    return author is not None and author.lower() in {t.lower() for t in trusted}


# --------------------------------------------------------------------------- pure: entries


def entry_comment_body(kind: EntryKind, text: str, *, jobid: str, nonce: str | None = None) -> str:
    """The comment holding one entry: a marker, then the text in a fence longer than
    any backtick run inside it (code is rendered verbatim and pings nobody)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    data = {"kind": kind, "jobid": jobid, **({"nonce": nonce} if nonce else {})}
    marker = render_marker("entry", data)
    return f"{marker}\n{fence}text\n{text}\n{fence}\n"


def parse_entry(
    comment: dict[str, Any], *, kind: EntryKind, bot: str, trusted: Iterable[str] = ()
) -> StateEntry | None:
    if not trusted_author(comment, bot=bot, trusted=trusted):
        return None
    body = str(comment.get("body") or "").replace("\r\n", "\n")
    marker = first_marker(body, "entry")
    match = _ENTRY_RE.search(body)
    if not marker or marker.get("kind") != kind or not match:
        return None
    jobid = marker.get("jobid")
    nonce = marker.get("nonce")
    return StateEntry(
        text=match.group("text"),
        author=comment["user"]["login"],
        created_at=comment["created_at"],
        url=str(comment.get("html_url") or ""),
        jobid=jobid if isinstance(jobid, str) else None,
        id=int(comment.get("id") or 0),
        nonce=nonce if isinstance(nonce, str) else None,
    )


def normalise_entry_text(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n").strip("\n")
    if not text.strip():
        raise StateError("An empty state entry was refused", "Write at least one visible word.")
    return text


def entries_issue_body(
    kind: EntryKind, *, generation: int, previous: int | None, nonce: str | None = None
) -> str:
    """The body of a new history or memory issue: its marker, title and a note."""
    what = "one line per agent run" if kind == "history" else "notes the agent keeps"
    lines = [
        state_marker(kind, generation, previous, nonce),
        f"# {TITLES[kind]}" + (f" (part {generation})" if generation > 1 else ""),
        "",
        f"Tusk appends its {kind} here as comments ({what}). Comments by anyone but the",
        "bot are ignored. Please do not edit or delete them.",
    ]
    if previous is not None:
        lines.append(f"\nContinues #{previous}.")
    return "\n".join(lines) + "\n"
