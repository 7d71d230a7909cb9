"""The run's status on the thread that started it (``feedback.thread_status``).

The requester sees 👀 and, at the end, 🚀 or 😕; what the run is doing is on its
log issue, in the control repository, which is often private. With
``feedback.thread_status`` on (the default) the bot keeps one status comment
on the triggering issue or pull request instead: *queued* once build-context
has claimed the job, *working* with the writes and refusals so far and the
pass (edited only when those change: the agent reads the thread, and an edit
in between would change what it reads), and the *outcome* with the progress
comment's facts and links to what the run created. It is Tusk's comment, not the
agent's: the MCP server neither counts it nor lets the agent touch it (the
agent may edit only what it made in this run). Its body links nothing in the
control repository; its footer is the one every post of a run carries (the run
log, the go-away line) with the run's ``backlink`` marker, so go-away and undo
remove it with the run's other comments.

Edits come at most every ``MIN_INTERVAL`` seconds of an injected clock, and
only when the text changed; the outcome always goes. The comment is found by
its hidden ``status`` marker (the bot's only), so a step that runs again, or a
create whose answer was lost, edits the one comment instead of adding a second.
Discussions keep only the reactions. A status is a courtesy: ``show`` never
raises, it says whether the comment now shows it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from tusk.errors import TuskError
from tusk.github.gateway import Gateway
from tusk.github.once import create_once, new_nonce
from tusk.text.markers import first_marker, render_marker

log = logging.getLogger(__name__)

MIN_INTERVAL = 30.0
Phase = Literal["queued", "working", "done"]
HEADS: dict[Phase, str] = {
    "queued": "⏳ **Queued.** The run has its log issue; the agent starts shortly.",
    "working": "⚙️ **Working.**",
    "done": "",
}


@dataclass(frozen=True)
class Status:
    """What the status comment says: the progress comment's facts, or the outcome."""

    phase: Phase
    pass_name: str = ""
    tool_calls: int = 0
    writes: int = 0
    refused: int = 0
    cost: str = ""
    minutes: int = 0
    headline: str = ""  # the outcome's, when done
    ok: bool = False
    links: tuple[tuple[str, str], ...] = ()  # (kind, url) of what the run created
    budget: str = ""  # the run's own budget, e.g. "$0.50"
    warning: str = ""  # said once the run has used most of its budget
    note: str = ""  # resumed the thread's earlier conversation, or a fresh start and why
    followups: int = 0  # follow-ups from the thread handed to the agent (MISSION C1)
    stopped_by: str = ""  # who stopped the run, and why they may (MISSION C2)
    approval: bool = False  # the writes wait for approval: nothing was made yet


def status_marker(jobid: str, nonce: str) -> str:
    return render_marker("status", {"jobid": jobid, "nonce": nonce})


def _in(url: str, repo: str) -> bool:
    return bool(repo) and f"/{repo.lower()}/" in url.lower() + "/"


def _control_repo(log_issue_url: str) -> str:
    """``owner/name`` of the control repository, from its log issue's URL."""
    parts = log_issue_url.rstrip("/").split("/")
    return "/".join(parts[-4:-2]) if len(parts) >= 4 else ""


def render_status(
    status: Status, *, jobid: str, nonce: str, bot: str, go_away: str, log_issue_url: str
) -> str:
    """The comment's body: its marker, the status, the footer of a run's posts. The log
    issue stays in the hidden marker only (undo finds the run by it)."""
    control_repo = _control_repo(log_issue_url)
    if status.phase == "done" and status.stopped_by:
        head = f"🛑 **Stopped** {status.stopped_by}. What it pushed and posted stays."
    elif status.phase == "done" and status.approval:
        head = f"{WAITING}: {status.headline}**. No write was made yet."
    elif status.phase == "done":
        mark = "✅" if status.ok else "⚠️"
        head = f"{mark} **Done: {status.headline}**"
    else:
        head = HEADS[status.phase]
    lines = [status_marker(jobid, nonce), head]
    if status.phase == "working":
        # Only what changes when the run does something the thread can see: an edit in
        # between would change what the agent reads of the thread (and hide a loop).
        facts = [f"writes so far: {status.writes}", f"refused: {status.refused}"]
        if status.followups:
            facts.append(f"follow-ups delivered: {status.followups}")
        if status.pass_name and status.pass_name != "starting":
            facts.append(f"pass: {status.pass_name}")
        if status.budget:
            facts.append(f"budget: {status.budget}")
        lines += ["", " · ".join(facts)]
        if status.warning:
            lines += ["", f"⚠️ {status.warning}"]
        lines += ["", f"<sub>Updated when the run writes, at most every {MIN_INTERVAL:g} s.</sub>"]
    elif status.phase == "done":
        facts = [
            f"pass: {status.pass_name or '—'}",
            f"tool calls: {status.tool_calls}",
            f"writes: {status.writes}",
            f"refused: {status.refused}",
            f"model cost: {status.cost or '—'}",
        ]
        if status.followups:
            facts.append(f"follow-ups delivered: {status.followups}")
        lines += ["", " · ".join(facts)]
    if status.note:  # Tusk's own words, no thread text and no link to the control repository
        lines += ["", f"💬 {status.note}"]
    # Nothing in the control repository is linked from the thread (its history and memory
    # entries, its log issue): the people on the thread may not see it, and need not.
    links = [(kind, url) for kind, url in status.links if not _in(url, control_repo)]
    if links:
        lines += ["", "Created by this run:"]
        lines += [f"- {kind.replace('_', ' ')}: {url}" for kind, url in links]
    backlink = render_marker("backlink", {"jobid": jobid, "log": log_issue_url, "nonce": nonce})
    lines += [
        "",
        "---",
        # No "@" before the bot's name outside code: the status must not mention the bot.
        f"<sub>🤖 Status of {bot}'s run · comment `@{bot} stop` to stop it, "
        f"`@{bot} {go_away}` to remove the bot from your repositories</sub>",
        backlink,
    ]
    return "\n".join(lines) + "\n"


def status_of(comments: Sequence[dict[str, Any]], *, bot: str, jobid: str) -> dict[str, Any] | None:
    """Pure: the bot's status comment of ``jobid`` among ``comments`` (the first one)."""
    for comment in sorted(comments, key=lambda c: int(c.get("id") or 0)):
        author = str((comment.get("user") or {}).get("login") or "")
        marker = first_marker(str(comment.get("body") or ""), "status") or {}
        if author.lower() == bot.lower() and marker.get("jobid") == jobid:
            return comment
    return None


WAITING = "⏸️ **Waiting for approval"


def settled_after_approval(body: str, verdict: str) -> str | None:
    """Pure: a status comment that waited for approval, with the set's verdict (applied,
    discarded, failed) in place of the waiting line, so nothing stale stays on the thread;
    None when ``body`` is no status that waits."""
    lines = body.split("\n")
    if len(lines) < 2 or first_marker(lines[0], "status") is None:
        return None
    if not lines[1].startswith(WAITING):
        return None
    return "\n".join([lines[0], verdict, *lines[2:]])


def thread_kind(trigger_type: str) -> str:
    """The thread a trigger of ``trigger_type`` sits on, as the status needs it."""
    return "discussion" if trigger_type.startswith("discussion") else "issue"


def headline_of(body: str) -> str | None:
    """Pure: the state a status comment's body shows (its first visible line, and its
    facts), None for any other body (the demo shows the states a status went through)."""
    lines = body.splitlines()
    if len(lines) < 2 or first_marker(lines[0], "status") is None:
        return None
    shown = len(lines) > 3 and lines[3] and not lines[3].startswith(("<sub>", "---", "Created"))
    facts = lines[3] if shown else ""
    return f"{lines[1]} {facts}".rstrip()


class ThreadStatus:
    """The one status comment of job ``jobid`` on issue or pull request ``number``."""

    def __init__(
        self,
        gateway: Gateway,
        *,
        repo: str,
        number: int | None,
        kind: str,
        jobid: str,
        bot: str,
        go_away: str,
        log_issue_url: str,
        clock: Callable[[], float] = time.monotonic,
        interval: float = MIN_INTERVAL,
    ) -> None:
        self.gateway = gateway
        self.repo = repo
        self.number = number if kind != "discussion" else None  # discussions: reactions only
        self.jobid = jobid
        self.bot = bot
        self.go_away = go_away
        self.log_issue_url = log_issue_url
        self.clock = clock
        self.interval = interval
        self.comment: dict[str, Any] | None = None
        self.shown: str | None = None
        self.last: float | None = None
        self.nonce = new_nonce()

    def _find(self) -> dict[str, Any] | None:
        path = f"/repos/{self.repo}/issues/{self.number}/comments"
        return status_of(list(self.gateway.paginate(path)), bot=self.bot, jobid=self.jobid)

    def _body(self, status: Status) -> str:
        return render_status(
            status,
            jobid=self.jobid,
            nonce=self.nonce,
            bot=self.bot,
            go_away=self.go_away,
            log_issue_url=self.log_issue_url,
        )

    def show(self, status: Status) -> bool:
        """Put ``status`` on the thread: at most every ``interval`` s, and only a change
        (the outcome always goes). True when the comment shows it."""
        if self.number is None:
            return False
        now = self.clock()
        due = self.last is None or now - self.last >= self.interval
        if status.phase != "done" and not due:
            return False
        try:
            if self.comment is None:
                self.comment = self._find()
                if self.comment is not None:
                    marker = first_marker(str(self.comment.get("body") or ""), "status") or {}
                    self.nonce = str(marker.get("nonce") or self.nonce)
            body = self._body(status)
            if body == self.shown:
                return True
            if self.comment is None:
                path = f"/repos/{self.repo}/issues/{self.number}/comments"
                # Not post_marked_comment: the status comment is found by its job id
                # among the thread's status comments (``status_of``), then edited.
                self.comment = create_once(
                    lambda: dict(
                        self.gateway.post(path, json={"body": body}, may_repeat=False).body
                    ),
                    self._find,
                    sleep=self.gateway.sleep,
                    what=f"the status comment of job {self.jobid}",
                )
            else:
                self.gateway.patch(
                    f"/repos/{self.repo}/issues/comments/{self.comment['id']}", json={"body": body}
                )
        except TuskError as error:
            log.warning("could not update the status on %s#%s: %s", self.repo, self.number, error)
            return False
        self.shown = body
        self.last = now
        return True
