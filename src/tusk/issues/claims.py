"""A job's claims, read only as GitHub documents them (ENGINEERING §2, MISSION A4).

GitHub promises read-after-write for an object's own URL and nothing for
listings: they lag a write, by no documented bound and in no documented order.
So the race between two deliveries of one job is decided on issues read by
their own URLs (``GET /repos/{owner}/{repo}/issues/{issue_number}``): a run
that created log issue N reads the issues numbered just below N, one by one,
down to the first one created more than the lease before N (``issues_below``).
Issue numbers only grow, so a rival that created its claim before N has a
lower number within that window and is seen; a rival created after N sees N
the same way. Claims older than the lease are found by the listing of the
bot's issues (``listed_claims``), which has long caught up with them; a claim
the listing still misses after the lease is an orphan that could have been
taken over anyway (``tusk.issues.lease``).

A claim is the bot's issue carrying the job's marker; nothing else people do
to it unmakes it. Its label is not needed (the listing is by creator, the scan
by number), and its state is not read: closed as completed, not planned or
duplicate by a person, it still holds its job. Only the bot releases a claim,
by closing its own issue as ``duplicate`` (``closed_by``, read from the
issue's own URL). A claim that was deleted (410 Gone) or transferred away and
is out of reach cannot be read at all; ``tusk.github.reactions.ran_record``
is the second record that stops a rerun then.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from tusk.contracts.config import Settings
from tusk.github.gateway import Gateway

Fate = Literal["here", "moved", "deleted", "none"]

# A number whose URL answers 404 is no issue (a discussion's number, or an issue
# being created right now); it is looked at again after these pauses, so that a
# rival's create still in flight is seen once it lands.
IN_FLIGHT_PAUSES = (1.0, 2.0, 4.0)


@dataclass(frozen=True)
class Slot:
    """What the URL of issue ``number`` answered."""

    number: int
    fate: Fate
    item: dict[str, Any] | None = None  # the issue, followed to its new home when moved


def read_number(gateway: Gateway, repo: str, number: int) -> Slot:
    """Issue ``number`` of ``repo`` by its own URL: GitHub's "Get an issue" documents 200,
    301 (transferred: followed once), 404 and 410 (deleted)."""
    path = f"/repos/{repo}/issues/{number}"
    answer = gateway.request("GET", path, allow_statuses=(404, 410), follow_redirects=False)
    if answer.status == 410:
        return Slot(number, "deleted")
    if answer.status in (301, 302, 307, 308):
        location = answer.header("location") or ""
        if "/issues/" not in location:
            return Slot(number, "moved")
        moved = gateway.request("GET", location, allow_statuses=(403, 404, 410))
        return Slot(number, "moved", moved.body if moved.status == 200 else None)
    if answer.status == 404:
        return Slot(number, "none")
    return Slot(number, "here", dict(answer.body))


def created_at(item: dict[str, Any] | None) -> datetime | None:
    text = (item or {}).get("created_at")
    return datetime.fromisoformat(str(text).replace("Z", "+00:00")) if text else None


def issues_below(
    gateway: Gateway,
    repo: str,
    number: int,
    *,
    since: datetime,
    sleep: Callable[[float], None],
    pauses: Iterable[float] = IN_FLIGHT_PAUSES,
    listed: Mapping[int, dict[str, Any]] | None = None,
) -> list[Slot]:
    """The issues numbered just below ``number``, read by their own URLs, down to the
    first one created at or before ``since`` (included) or to issue 1.

    ``listed`` (``recent_issues``) saves the reads of numbers a listing already
    showed: a listing may miss an issue or show an old version of it, but what it
    shows is that issue (its author and the marker the bot wrote never change;
    a stale state can only keep a claim, never unmake one). Every number the
    listing does not show is read by its own URL, and so is one it shows closed as
    ``duplicate``: listings carry no ``closed_by``, which says whether the bot
    released it."""
    known = {n: item for n, item in (listed or {}).items() if not looks_released(item)}
    slots: list[Slot] = []
    for below in range(number - 1, 0, -1):
        slot = Slot(below, "here", known[below]) if below in known else None
        slot = slot or read_number(gateway, repo, below)
        slots.append(slot)
        moment = created_at(slot.item)
        if slot.fate == "here" and moment is not None and moment <= since:
            break
    for pause in pauses:
        if not any(slot.fate == "none" for slot in slots):
            break
        sleep(pause)
        slots = [read_number(gateway, repo, s.number) if s.fate == "none" else s for s in slots]
    return slots


def recent_issues(gateway: Gateway, repo: str) -> dict[int, dict[str, Any]]:
    """The newest hundred issues a listing shows, by number: one request for what most
    of a claim's own-URL reads would fetch one by one."""
    params = {"state": "all", "sort": "created", "direction": "desc", "per_page": 100}
    items = gateway.get(f"/repos/{repo}/issues", params=params) or []
    return {int(item["number"]): dict(item) for item in items}


def window_start(created: dict[str, Any], lease_minutes: float) -> datetime:
    """How far back ``issues_below`` reads for a claim created as ``created``."""
    moment = created_at(created)
    assert moment is not None  # GitHub always answers created_at
    return moment - timedelta(minutes=lease_minutes)


def looks_released(item: dict[str, Any]) -> bool:
    """Closed as ``duplicate``: released if the bot closed it, which only the issue's own
    URL says (GitHub's listings and search items have no ``closed_by``)."""
    return item.get("state") == "closed" and item.get("state_reason") == "duplicate"


def released(item: dict[str, Any], bot: str) -> bool:
    """Whether the bot released this claim: closed by the bot itself as ``duplicate``.
    Whatever a person does (close, reopen, close as duplicate) leaves it a claim."""
    if item.get("state") != "closed" or item.get("state_reason") != "duplicate":
        return False
    closer = str((item.get("closed_by") or {}).get("login") or "")
    return closer.lower() == bot.lower()


def by_bot(item: dict[str, Any] | None, bot: str) -> bool:
    author = str(((item or {}).get("user") or {}).get("login") or "")
    return author.lower() == bot.lower()


def listed_claims(
    gateway: Gateway, settings: Settings, *, since: datetime | None
) -> Iterable[dict[str, Any]]:
    """The bot's issues in the control repository (any label, any state), oldest first.
    ``since`` bounds them by last update (a job's claims are all newer than its trigger)."""
    params: dict[str, Any] = {
        "creator": settings.bot,
        "state": "all",
        "sort": "created",
        "direction": "asc",
    }
    if since is not None:
        params["since"] = since.strftime("%Y-%m-%dT%H:%M:%SZ")
    for item in gateway.paginate(f"/repos/{settings.control_repo}/issues", params=params):
        if item.get("pull_request") is None:
            yield item


def confirmed(gateway: Gateway, settings: Settings, item: dict[str, Any]) -> dict[str, Any]:
    """A listed issue that looks released, read again by its own URL: only that answer
    names ``closed_by`` for sure, and a listing may be stale."""
    if not looks_released(item):
        return item
    slot = read_number(gateway, settings.control_repo, int(item["number"]))
    return slot.item if slot.fate == "here" and slot.item is not None else item


def renumbered(item: dict[str, Any], number: int) -> dict[str, Any]:
    """A moved claim keeps the number it had in the control repository, where it raced."""
    return item if int(item.get("number") or 0) == number else {**item, "number": number}
