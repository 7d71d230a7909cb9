"""What each go-away leaves in its own log issue, and the blocklist rebuilt from it.

The blocklist issue is the list every poll and every MCP write checks; people
can delete it or transfer it away. A missing blocklist must then never read as
empty while the go-aways that filled it are on record. So each finished
go-away writes a ``go-away`` marker into its log issue's body: its job, how
many problems it left (a run again for the job finishes them,
``tusk.steps.go_away.main``) and the entries it asked the blocklist to hold.

``blocklist_from_go_aways`` reads those records back (the bot's log issues
only; a search by their title, ``go away``): their union is the blocklist to
read, and to seed a new blocklist issue with. A finished go-away log whose
record cannot be read (a person edited it away, or an older Tusk wrote it)
stops the reader with a clear error instead; entries a later change removed
come back, erring towards leaving people alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError

from tusk.contracts.config import Settings
from tusk.contracts.models import Blocklist
from tusk.errors import UserError
from tusk.github.gateway import Gateway, GitHubError
from tusk.text.markers import first_marker, render_marker

GO_AWAY_HEADING = "\n# Go away\n"  # the go-away log's own heading (go_away_log.md.j2)
TITLE_WORDS = "go away"  # in every go-away log's title (``plan.log_title``)
GO_AWAY_TITLE = re.compile(r"^\[Agent Log\] .* go away — ")


class BlocklistGone(UserError):
    """The blocklist issue is gone and the go-aways on record cannot rebuild it."""


def go_away_record(jobid: str, failures: int, blocked: Blocklist | None) -> str:
    """The marker a finished go-away writes into its log issue."""
    data: dict[str, Any] = {"jobid": jobid, "failures": failures}
    if blocked is not None:
        data["blocked"] = blocked.model_dump(mode="json", exclude={"version"})
    return render_marker("go-away", data)


def is_go_away_log(item: dict[str, Any], bot: str) -> bool:
    author = str((item.get("user") or {}).get("login") or "")
    body = str(item.get("body") or "")
    if author.lower() != bot.lower() or item.get("pull_request") is not None:
        return False
    if first_marker(body, "go-away") is not None or GO_AWAY_TITLE.match(item.get("title") or ""):
        return True
    return first_marker(body, "job") is not None and GO_AWAY_HEADING in body


def union(first: Blocklist, second: Blocklist) -> Blocklist:
    repos = {entry.repo.lower(): entry for entry in first.repos}
    users = {entry.user.lower(): entry for entry in first.users}
    for repo in second.repos:
        repos.setdefault(repo.repo.lower(), repo)
    for user in second.users:
        users.setdefault(user.user.lower(), user)
    return Blocklist(repos=tuple(repos.values()), users=tuple(users.values()))


def fold_records(items: Iterable[dict[str, Any]], bot: str) -> Blocklist | None:
    """Pure: the blocklist the go-away logs among ``items`` record, or None when there is
    none. Raises ``BlocklistGone`` for a finished go-away whose record cannot be read.
    A go-away still at work (its log open, no record yet) is skipped: it writes the
    blocklist issue itself before it finishes."""
    found: Blocklist | None = None
    for item in items:
        if not is_go_away_log(item, bot):
            continue
        record = first_marker(item.get("body"), "go-away")
        if record is None and item.get("state") != "closed":
            continue
        if record is None:
            raise _unreadable(item, "it has no go-away record")
        found = found or Blocklist()
        blocked = record.get("blocked")
        if blocked is None:  # it blocked nothing (its blocklist update failed)
            continue
        try:
            entries = Blocklist.model_validate({**blocked, "version": 1})
        except (ValidationError, TypeError) as error:
            raise _unreadable(item, f"its record is not a blocklist ({error})") from None
        found = union(found, entries)
    return found


def _unreadable(item: dict[str, Any], why: str) -> BlocklistGone:
    return BlocklistGone(
        f"The blocklist issue is gone (deleted or transferred?) and go-away log "
        f"{item.get('html_url')} cannot rebuild it: {why}",
        "Nothing was assumed, least of all an empty blocklist. Transfer the blocklist issue "
        "back, or restore that log issue's body from its edit history on GitHub (the "
        "hidden go-away record is in the version the bot wrote).",
    )


def blocklist_from_go_aways(gateway: Gateway, settings: Settings) -> Blocklist | None:
    """The blocklist the control repository's go-away logs record, or None when no
    go-away is on record (then no blocklist issue is right)."""
    query = f'repo:{settings.control_repo} is:issue author:{settings.bot} in:title "{TITLE_WORDS}"'
    try:
        items = list(
            gateway.paginate("/search/issues", params={"q": query}, per_page=100, item_key="items")
        )
    except GitHubError as error:
        raise BlocklistGone(
            "No blocklist issue was found, and whether a go-away ever filled one cannot be told",
            f"The search for go-away log issues failed ({error.title}). Nothing was assumed; "
            "run again.",
        ) from None
    return fold_records(items, settings.bot)
