"""undo's decisions, free of I/O: which run, who may undo it, what it left.

``@bot undo`` on a thread undoes the latest run that still has writes there:
the bot's comments on the thread carry their run's ``backlink`` marker (job
id, log issue), so the thread itself says which runs posted on it. Only the
bot's own content counts (anyone can type a marker).

What the run made comes from its audit log (every write the MCP server let
through, with the URL of what it created), read back from the run's log
issue, plus Tusk's own status comment on the thread. Each is removed the way
GitHub allows: comments deleted, issues closed as not planned, pull requests
closed, branches on the bot's fork deleted, but only a branch the run's push
created and whose head is still the commit the run pushed (a branch the run
only moved, or one someone pushed to since, is left), labels the run added
removed. The bot stays allowed:
nothing is blocked. Who may undo is decided on rights GitHub confirms
(``tusk.github.rights``) over the repositories the removals touch.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

from tusk.audit.chain import CreatedItem
from tusk.text.markers import first_marker

RemovalKind = Literal["comment", "issue", "pull_request", "branch", "label"]
_COMMENT = re.compile(r"^/(?P<repo>[^/]+/[^/]+)/(?:issues|pull)/\d+$")
_NUMBERED = re.compile(r"^/(?P<repo>[^/]+/[^/]+)/(?P<kind>issues|pull)/(?P<n>\d+)$")
_TREE = re.compile(r"^/(?P<repo>[^/]+/[^/]+)/tree/(?P<branch>.+)$")


@dataclass(frozen=True)
class RunOnThread:
    """A run that posted on the thread: its job id, log issue and the comments it left."""

    jobid: str
    log_issue_url: str
    comment_ids: tuple[int, ...]


@dataclass(frozen=True)
class Removal:
    """One write of the run, and how to take it back."""

    kind: RemovalKind
    repo: str
    ident: str  # a comment id, an issue or pull request number, a branch name, number/label
    url: str
    # A branch: whether the run's pushes created it (None: its audit does not say), and
    # the commit its last push left it at.
    created: bool | None = None
    head: str | None = None

    def describe(self) -> str:
        verbs = {
            "comment": "delete the comment",
            "issue": "close the issue as not planned",
            "pull_request": "close the pull request",
            "branch": "delete the branch",
            "label": "remove the label from",
        }
        return f"{verbs[self.kind]} {self.url}"


@dataclass
class UndoReport:
    """What undo did, for the log issues, the audit chain and the step's outputs."""

    actor: str
    run: RunOnThread | None = None
    requester: str | None = None
    refused: str | None = None
    done: list[Removal] = field(default_factory=list)
    gone: list[Removal] = field(default_factory=list)  # already removed (by someone else)
    failed: list[tuple[Removal, str]] = field(default_factory=list)
    skipped: list[tuple[Removal, str]] = field(default_factory=list)  # not the run's: kept
    edited: list[Removal] = field(default_factory=list)  # done, though edited since the run
    rights: str = ""  # what the actor's right to undo rests on


def backlink_of(item: dict[str, Any], *, bot: str) -> dict[str, Any] | None:
    """The run marker of the bot's own content: its ``backlink`` (an agent's post) or its
    ``status`` (Tusk's status comment). None for anyone else's content."""
    author = str((item.get("user") or {}).get("login") or "")
    if author.lower() != bot.lower():
        return None
    body = str(item.get("body") or "")
    marker = first_marker(body, "backlink") or first_marker(body, "status")
    if marker is None or not isinstance(marker.get("jobid"), str):
        return None
    return marker


def runs_on_thread(comments: Iterable[dict[str, Any]], *, bot: str) -> list[RunOnThread]:
    """The runs whose comments are on the thread, the latest (by its last comment) first."""
    found: dict[str, tuple[str, list[int]]] = {}
    for comment in sorted(comments, key=lambda c: int(c.get("id") or 0)):
        marker = backlink_of(comment, bot=bot)
        if marker is None:
            continue
        log, ids = found.setdefault(marker["jobid"], (str(marker.get("log") or ""), []))
        if not log and marker.get("log"):
            found[marker["jobid"]] = (str(marker["log"]), ids)
        ids.append(int(comment["id"]))
    runs = [RunOnThread(jobid, log, tuple(ids)) for jobid, (log, ids) in found.items()]
    return sorted(runs, key=lambda run: -max(run.comment_ids))


def touched_repos(thread_repo: str, removals: Sequence[Removal], *, bot: str) -> list[str]:
    """The repositories an undo writes to, whose write access confirms an actor who did not
    ask for the run: the thread's and those of the run's writes, the bot's own fork aside."""
    repos: dict[str, str] = {thread_repo.lower(): thread_repo}
    for removal in removals:
        if removal.repo.split("/", 1)[0].lower() != bot.lower():
            repos.setdefault(removal.repo.lower(), removal.repo)
    return list(repos.values())


def removal_of(item: CreatedItem) -> Removal | None:
    """How to take back one thing the run created; None for what undo leaves (history,
    memory: the control repository's own record)."""
    parts = urlsplit(item.url)
    path = parts.path.rstrip("/")
    if item.kind == "comment":
        match = _COMMENT.match(path)
        comment = re.fullmatch(r"issuecomment-(\d+)", parts.fragment)
        if match and comment:
            return Removal("comment", match.group("repo"), comment.group(1), item.url)
        return None
    if item.kind in ("issue", "pull_request"):
        match = _NUMBERED.match(path)
        kind: RemovalKind = "issue" if item.kind == "issue" else "pull_request"
        if match:
            return Removal(kind, match.group("repo"), match.group("n"), item.url)
        return None
    if item.kind == "label":  # <issue or pull request URL>#label=<name, quoted>
        match = _NUMBERED.match(path)
        label = unquote(parts.fragment.removeprefix("label=")) if parts.fragment else ""
        if match and parts.fragment.startswith("label=") and label:
            ident = f"{match.group('n')}/{label}"
            return Removal("label", match.group("repo"), ident, item.url)
        return None
    if item.kind == "branch":
        match = _TREE.match(path)
        if match:
            created = None if item.branch is None else item.branch == "created"
            return Removal(
                "branch",
                match.group("repo"),
                match.group("branch"),
                item.url,
                created=created,
                head=item.head,
            )
    return None


def removals(created: Sequence[CreatedItem], status_comments: Sequence[Removal]) -> list[Removal]:
    """Everything to take back, once each: comments first (they point at the rest), then
    pull requests, issues and branches."""
    order = {"comment": 0, "label": 1, "pull_request": 2, "issue": 3, "branch": 4}
    found: dict[tuple[str, str, str], Removal] = {}
    for removal in [*status_comments, *(r for i in created if (r := removal_of(i)))]:
        key = (removal.kind, removal.repo.lower(), removal.ident)
        if key in found and removal.kind == "branch":
            removal = pushed_again(found[key], removal)
        elif key in found:
            continue
        found[key] = removal
    return sorted(found.values(), key=lambda r: order[r.kind])


def pushed_again(first: Removal, later: Removal) -> Removal:
    """One branch the run pushed twice: created if either push created it (the first does),
    and at the head the later push left."""
    return Removal(
        "branch",
        first.repo,
        first.ident,
        first.url,
        created=first.created or later.created,
        head=later.head or first.head,
    )
