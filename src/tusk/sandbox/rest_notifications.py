"""REST handlers: the notifications inbox, with GitHub's conditional-request behaviour.

``Last-Modified`` is the time the user's inbox last changed; a request whose
``If-Modified-Since`` is not older is answered 304 without a body (and the
server does not count it against the rate limit). ``X-Poll-Interval`` asks
pollers to wait 60 seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from email.utils import format_datetime, parsedate_to_datetime

from tusk.sandbox.rest import Call, Reply, handles, listing, validation_failed
from tusk.sandbox.world import SandboxError
from tusk.sandbox.world_clock import parse_time
from tusk.sandbox.world_records import Thread

POLL_INTERVAL = "60"
PARTICIPATING = frozenset(
    {"author", "comment", "mention", "team_mention", "review_requested", "assign", "state_change"}
)


def _inbox_headers(call: Call, login: str) -> tuple[dict[str, str], datetime | None]:
    modified = call.world.inbox_modified.get(login.lower())
    headers = {"X-Poll-Interval": POLL_INTERVAL}
    if modified is not None:
        headers["Last-Modified"] = format_datetime(modified, usegmt=True)
    return headers, modified


def _not_modified(call: Call, modified: datetime | None) -> bool:
    since = call.headers.get("if-modified-since")
    if not since or modified is None:
        return False
    try:
        return modified <= parsedate_to_datetime(since)
    except (TypeError, ValueError):
        return False


def _time_arg(call: Call, name: str) -> datetime | None:
    text = call.arg(name)
    if not text:
        return None
    try:
        return parse_time(text)
    except ValueError:
        raise validation_failed("Notification", name) from None


def _threads(call: Call, login: str, repo_name: str | None) -> list[Thread]:
    show_all = call.arg("all") == "true"
    participating = call.arg("participating") == "true"
    since, before = _time_arg(call, "since"), _time_arg(call, "before")
    items = []
    for thread in call.world.threads:
        if thread.user.lower() != login.lower() or thread.done:
            continue
        if repo_name and thread.repo.lower() != repo_name.lower():
            continue
        if not show_all and not thread.unread:
            continue
        if participating and thread.reason not in PARTICIPATING:
            continue
        if since and thread.updated_at < since:
            continue
        if before and thread.updated_at >= before:
            continue
        items.append(thread)
    return sorted(items, key=lambda t: (t.updated_at, t.id), reverse=True)


@dataclass
class LateMark:
    """A "mark as read" answered 202: it lands after ``listings_left`` more listings."""

    user: str
    repo: str | None
    cutoff: datetime
    listings_left: int


def _land_late_marks(call: Call, login: str) -> None:
    """Before a listing of ``login``'s inbox, the late marks whose time has come land."""
    waiting = []
    for mark in call.world.late_marks:
        if mark.user.lower() != login.lower():
            waiting.append(mark)
        elif mark.listings_left <= 0:
            _apply_mark(call, login, mark.repo, mark.cutoff)
        else:
            mark.listings_left -= 1
            waiting.append(mark)
    call.world.late_marks = waiting


@handles("activity/list-notifications-for-authenticated-user")
def list_notifications(call: Call) -> Reply:
    login = call.require_user()
    call.require_scope("notifications", "repo")
    _land_late_marks(call, login)
    headers, modified = _inbox_headers(call, login)
    if _not_modified(call, modified):
        return Reply(304, None, headers)
    reply = listing(
        call, [call.shapes.thread(t) for t in _threads(call, login, None)], default=50, maximum=50
    )
    reply.headers.update(headers)
    return reply


@handles("activity/list-repo-notifications-for-authenticated-user")
def list_repo_notifications(call: Call) -> Reply:
    login = call.require_user()
    call.require_scope("notifications", "repo")
    repo = call.repo()
    _land_late_marks(call, login)
    headers, modified = _inbox_headers(call, login)
    if _not_modified(call, modified):
        return Reply(304, None, headers)
    reply = listing(call, [call.shapes.thread(t) for t in _threads(call, login, repo.full_name)])
    reply.headers.update(headers)
    return reply


def _thread(call: Call) -> Thread:
    login = call.require_user()
    call.require_scope("notifications", "repo")
    wanted = call.int_param("thread_id")
    for thread in call.world.threads:
        if thread.id == wanted and thread.user.lower() == login.lower():
            return thread
    raise SandboxError(404, "Not Found")


@handles("activity/get-thread")
def get_thread(call: Call) -> Reply:
    """One thread, conditionally: the API description documents 304 for
    activity/get-thread. ``Last-Modified`` is the thread's last change (new
    activity, or being marked read)."""
    thread = _thread(call)
    changed = max(thread.updated_at, thread.last_read_at or thread.updated_at)
    headers = {"Last-Modified": format_datetime(changed, usegmt=True)}
    if _not_modified(call, changed):
        return Reply(304, None, headers)
    return Reply(200, call.shapes.thread(thread), headers)


@handles("activity/mark-thread-as-read")
def mark_read(call: Call) -> Reply:
    thread = _thread(call)
    if thread.unread:
        moment = call.world.clock.tick()
        thread.unread = False
        thread.last_read_at = moment
        call.world.touch_inbox(thread.user, moment)
    return Reply(205)


@handles("activity/mark-thread-as-done")
def mark_done(call: Call) -> Reply:
    thread = _thread(call)
    moment = call.world.clock.tick()
    thread.unread = False
    thread.done = True
    thread.last_read_at = thread.last_read_at or moment
    call.world.touch_inbox(thread.user, moment)
    return Reply(204)


@handles("activity/mark-notifications-as-read")
def mark_all_read(call: Call) -> Reply:
    return _mark_read_until(call, None)


@handles("activity/mark-repo-notifications-as-read")
def mark_repo_read(call: Call) -> Reply:
    return _mark_read_until(call, call.repo().full_name)


def _mark_read_until(call: Call, repo_name: str | None) -> Reply:
    """Mark read every unread thread (of one repository, or all) last updated at or
    before ``last_read_at`` (default: now). GitHub: "Anything updated since this time
    will not be marked as read." (REST docs, Mark notifications as read)."""
    login = call.require_user()
    call.require_scope("notifications", "repo")
    cutoff_text = call.field("last_read_at")
    cutoff = parse_time(cutoff_text) if cutoff_text else call.world.clock.now()
    if call.world.mark_read_late_listings > 0:
        late = LateMark(login, repo_name, cutoff, call.world.mark_read_late_listings)
        call.world.late_marks.append(late)
        return Reply(
            202,
            {
                "message": "Unread notifications couldn't be marked in a single request. "
                "Notifications are being marked as read in the background."
            },
        )
    _apply_mark(call, login, repo_name, cutoff)
    return Reply(205)


def _apply_mark(call: Call, login: str, repo_name: str | None, cutoff: datetime) -> None:
    moment = call.world.clock.tick()
    for thread in call.world.threads:
        if thread.user.lower() != login.lower() or not thread.unread:
            continue
        if repo_name is not None and thread.repo.lower() != repo_name.lower():
            continue
        if thread.updated_at <= cutoff:
            thread.unread = False
            thread.last_read_at = moment
    call.world.touch_inbox(login, moment)
