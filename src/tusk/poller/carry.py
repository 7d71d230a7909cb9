"""Follow-ups a run could no longer take become the thread's next task (MISSION C1).

A follow-up recorded on a log issue after the run's last pass (the run's inbox
marked it ``missed``, or it landed after the inbox closed: a poller's listing
that lagged, a hand-over racing the write-up) is never delivered. Once the run
can take nothing more (its log issue is closed, or open but failed or dead), the
poller, on every cycle (idle ones too), lists the bot's log issues by last
update, conditionally, and dispatches each follow-up there marked neither
``delivered``, ``carried`` nor ``refused`` as a task for its thread, past the
limits across runs as a fresh mention. The job id comes from the follow-up's
node, so two pollers, a lost dispatch answer and re-deliveries are one job,
which the claim runs once; the ``carried`` record and the thread's note follow
the dispatch, so a failure before them only repeats a dispatch that collapses.
Of two sweeps that carry at one instant, the one whose ``carried`` record came
first (read back from the issue) tells the thread.

Only the bot's records count (``tusk.issues.followups``), and the mention is read
back from its thread and planned as a trigger is (``core.plan``: allowed users,
the blocklist, its own permission marker). Pure but for ``recently_updated``,
``say_outcome`` and ``note_carried``, which talk to GitHub; the cycle does the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from tusk.contracts.config import Settings
from tusk.contracts.models import TriggerType
from tusk.contracts.raw_context import ThreadKind
from tusk.github.gateway import Gateway
from tusk.github.once import new_nonce, post_marked_comment
from tusk.issues import claims, followups
from tusk.issues.followups import Followup
from tusk.issues.thread_runs import in_flight, thread_in_marker
from tusk.poller.jobids import job_id
from tusk.text.markers import parse_markers, render_marker

CARRIED = "carried"
# Outcomes that settle a follow-up: the agent got it, or a new run took it as its task.
SETTLED = frozenset({"delivered", CARRIED})
# Outcomes that settle it without a run: nobody may start one with it any more.
REFUSED = "refused"
# Settles nothing: a follow-up over a limit that waits; the record keeps its log issue
# among the recently updated, so the sweep keeps finding it until the limit allows it.
WAITING = "waiting"


def outcomes(comments: Sequence[dict[str, Any]], *, bot: str) -> dict[str, set[str]]:
    """Every outcome the bot recorded for each node (``missed`` comes before ``carried``)."""
    found: dict[str, set[str]] = {}
    for comment in comments:
        if not claims.by_bot(comment, bot):
            continue
        for data in parse_markers(comment.get("body"), "followup-delivered"):
            node, how = data.get("node"), data.get("how")
            if isinstance(node, str) and isinstance(how, str):
                found.setdefault(node, set()).add(how)
    return found


def to_carry(comments: Sequence[dict[str, Any]], *, bot: str) -> list[Followup]:
    """The follow-ups on a finished run's log issue that no run has taken and none was
    refused, oldest first."""
    done = outcomes(comments, bot=bot)
    return [
        f
        for f in followups.recorded(comments, bot=bot)
        if not done.get(f.node, set()) & (SETTLED | {REFUSED})
    ]


def thread_kind(url: str) -> ThreadKind:
    """The kind of thread a follow-up's URL is on (a comment's type does not say)."""
    if "/pull/" in url:
        return "pull_request"
    return "discussion" if "/discussions/" in url else "issue"


def node_parts(node: str) -> tuple[str, str]:
    """(trigger type, node id) of a follow-up's ``node``."""
    kind, _, identifier = node.partition(":")
    return kind, identifier


def carried_job_id(repo: str, node: str) -> str:
    """The job a carried follow-up runs as: from its node alone, so every sweep that finds
    it names one job, and never the mention's own (a hand-over claimed that one)."""
    kind, identifier = node_parts(node)
    trigger_type: TriggerType = kind  # type: ignore[assignment]  # checked by the caller
    return job_id(repo, trigger_type, f"{identifier}/carried")


def finished_thread(
    item: dict[str, Any], settings: Settings, now: datetime
) -> tuple[str, int] | None:
    """The thread of a finished run's log issue, or None: the bot's, and closed, or open
    but holding its thread no longer (failed under ``bug``, a failure record, or past its
    budget and lease: ``thread_runs.in_flight``)."""
    if not claims.by_bot(item, settings.bot):
        return None
    thread = thread_in_marker(item)
    if thread is None or "#" not in thread:
        return None
    if item.get("state") != "closed" and in_flight([item], settings, thread, now) is not None:
        return None
    repo, _, number = thread.rpartition("#")
    return (repo, int(number)) if number.isdigit() else None


@dataclass(frozen=True)
class Listing:
    """The bot's log issues, most recently updated first, or ``unchanged`` (a 304)."""

    unchanged: bool
    items: list[dict[str, Any]]
    etag: str | None


PAGE = 100


def _listing_params(settings: Settings) -> dict[str, Any]:
    return {
        "labels": settings.labels.workflow,
        "state": "all",
        "creator": settings.bot,
        "sort": "updated",
        "direction": "desc",
        "per_page": PAGE,
    }


def recently_updated(gateway: Gateway, settings: Settings, *, etag: str | None) -> Listing:
    """The first page of the bot's log issues, open or closed, by last update: a record
    that lands after a close updates its issue, which comes first. Asked with the last
    sweep's ETag, an unchanged page is a 304, which costs no rate limit."""
    path = f"/repos/{settings.control_repo}/issues"
    answer = gateway.conditional_get(path, params=_listing_params(settings), etag=etag)
    if answer.status == 304:
        return Listing(True, [], etag)
    return Listing(False, list(answer.body or []), answer.header("etag"))


def cutoff(settings: Settings, now: datetime, *, swept_since: str | None) -> datetime:
    """How far back a sweep reads: a run's budget and lease, or further, to where the
    last complete sweep began when the poller was down longer than that (issues updated
    before it were read then; one a record updates comes back above it)."""
    start = now - window(settings)
    if swept_since is None:
        return start
    try:
        last = datetime.fromisoformat(swept_since.replace("Z", "+00:00"))
    except ValueError:
        return start
    return min(start, last - timedelta(seconds=1))  # updated_at has whole seconds


def next_mark(settings: Settings, began: datetime, mark: str | None) -> str:
    """The mark a complete sweep that ``began`` leaves. Moved only once it is half a
    window old: until then the window reaches further back anyway, and a mark that
    stays put leaves the poll state, and the cache it lives in, unchanged on idle polls."""
    if mark is not None:
        try:
            kept = datetime.fromisoformat(mark.replace("Z", "+00:00"))
        except ValueError:
            return began.isoformat()
        if kept > began - window(settings) / 2:
            return mark
    return began.isoformat()


def updated_after(item: dict[str, Any], since: datetime) -> bool:
    updated = item.get("updated_at")
    if not isinstance(updated, str):
        return False
    return datetime.fromisoformat(updated.replace("Z", "+00:00")) > since


def reaches_past_page(items: Sequence[dict[str, Any]], since: datetime) -> bool:
    """A full first page whose last issue is still inside the sweep: more lie beyond it."""
    return len(items) >= PAGE and updated_after(items[-1], since)


def updated_since(gateway: Gateway, settings: Settings, since: datetime) -> list[dict[str, Any]]:
    """Every log issue of the bot updated since ``since`` (all pages; GitHub's ``since``),
    asked only when the first page does not reach back that far."""
    params = {**_listing_params(settings), "since": since.strftime("%Y-%m-%dT%H:%M:%SZ")}
    del params["per_page"]
    return list(gateway.paginate(f"/repos/{settings.control_repo}/issues", params=params))


def outcome_note(followup: Followup, how: str, note: str, nonce: str) -> str:
    """What became of a late follow-up, on the log issue. It opens with its marker: the
    poller's bot token writes nothing else there. ``nonce``: this sweep's own."""
    data = {"node": followup.node, "how": how, "nonce": nonce}
    return f"{render_marker('followup-delivered', data)}\n{note}\n"


def say_outcome(
    gateway: Gateway, settings: Settings, *, log_issue: int, followup: Followup, how: str, note: str
) -> str:
    """The outcome on the log issue, made once although its answer may be lost; the nonce
    it carries."""
    nonce = new_nonce()
    post_marked_comment(
        gateway,
        settings.control_repo,
        log_issue,
        outcome_note(followup, how, note, nonce),
        kind="followup-delivered",
        nonce=nonce,
        bot=settings.bot,
        what=f"the {how} record of a late follow-up",
    )
    return nonce


def window(settings: Settings) -> timedelta:
    """How far back the sweep looks: a run's budget plus its claim's lease."""
    return timedelta(minutes=settings.limits.run_minutes + settings.limits.claim_lease_minutes)


def needs_waiting_record(
    comments: Sequence[dict[str, Any]], followup: Followup, settings: Settings, now: datetime
) -> bool:
    """True when no ``waiting`` record of the bot for ``followup`` is younger than half the
    sweep's window (one more keeps its log issue in the window)."""
    fresh = now - window(settings) / 2
    for comment in comments:
        created = comment.get("created_at")
        if not claims.by_bot(comment, settings.bot) or not isinstance(created, str):
            continue
        if datetime.fromisoformat(created.replace("Z", "+00:00")) <= fresh:
            continue
        for data in parse_markers(comment.get("body"), "followup-delivered"):
            if data.get("node") == followup.node and data.get("how") == WAITING:
                return False
    return True


def first_to_say(
    comments: Sequence[dict[str, Any]], *, bot: str, node: str, how: str
) -> str | None:
    """The nonce of the bot's earliest ``how`` record for ``node``: the sweep that made it
    tells the thread, so two pollers carrying at one instant post one note."""
    for comment in sorted(comments, key=lambda c: int(c.get("id") or 0)):
        if not claims.by_bot(comment, bot):
            continue
        for data in parse_markers(comment.get("body"), "followup-delivered"):
            if data.get("node") == node and data.get("how") == how:
                nonce = data.get("nonce")
                return nonce if isinstance(nonce, str) else None
    return None


def carried_note(followup: Followup, *, jobid: str) -> str:
    """The thread's word that its follow-up is a new run's task. No ``@``."""
    return (
        render_marker("followup-carried", {"node": followup.node, "jobid": jobid})
        + f"\n📨 The follow-up {followup.url} came after the run on this thread ended, "
        "so it was not delivered to it: it is the task of a new run.\n"
    )


def note_carried(
    gateway: Gateway,
    settings: Settings,
    *,
    log_issue: int,
    thread: tuple[str, int],
    followup: Followup,
    jobid: str,
) -> bool:
    """Once dispatched: ``carried`` on the log issue; then, when this sweep's record is the
    first (read back from the issue), the note on the thread, looked for first (by node).
    True when this sweep told the thread."""
    mine = say_outcome(
        gateway,
        settings,
        log_issue=log_issue,
        followup=followup,
        how=CARRIED,
        note=f"📨 Follow-up {followup.url} came after the run ended: it is job {jobid}'s task.",
    )
    comments = followups.read(gateway, settings.control_repo, log_issue)
    if first_to_say(comments, bot=settings.bot, node=followup.node, how=CARRIED) != mine:
        return False  # another sweep recorded it first: that one tells the thread
    repo, number = thread
    post_marked_comment(
        gateway,
        repo,
        number,
        carried_note(followup, jobid=jobid),
        kind="followup-carried",
        nonce=followup.node,
        key="node",
        bot=settings.bot,
        look_first=True,
        what="the carried follow-up's note",
    )
    return True
