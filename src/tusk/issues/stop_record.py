"""A stop, recorded on the log issue of the run it ends (MISSION C2).

Whoever verified ``@bot stop`` from GitHub (its rights confirmed, the run in
flight found) records it as the bot's comment on that run's log issue, under a
``stop`` marker naming who stopped it, the comment that asked, and why they may.
The run watches its log issue for it; only the bot's own comments count, so a
stop typed on the log issue by anyone else ends nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tusk.github.gateway import Gateway
from tusk.github.once import new_nonce, post_marked_comment
from tusk.text.markers import parse_markers, render_marker


@dataclass(frozen=True)
class StopRecord:
    actor: str
    url: str  # the comment that asked
    why: str  # why the actor may: the run's requester, or write access GitHub confirms
    nonce: str = ""

    def said(self) -> str:
        return f"stopped by {self.actor} on the thread ({self.why})"


def body(record: StopRecord) -> str:
    data = {"actor": record.actor, "url": record.url, "why": record.why, "nonce": record.nonce}
    return (
        render_marker("stop", data)
        + f"\n🛑 Stopped by {record.actor}: {record.url}\n\n{record.why}. The MCP server "
        "refuses every further write; the run ends, and what it pushed and posted stays."
    )


def stop_of(comments: Iterable[dict[str, Any]], *, bot: str) -> StopRecord | None:
    """The first stop the bot recorded among ``comments``, or None."""
    for comment in comments:
        author = str((comment.get("user") or {}).get("login") or "")
        if author.lower() != bot.lower():
            continue
        for data in parse_markers(comment.get("body"), "stop"):
            actor, url, why = data.get("actor"), data.get("url"), data.get("why")
            if isinstance(actor, str) and isinstance(url, str) and isinstance(why, str):
                return StopRecord(actor, url, why, nonce=str(data.get("nonce") or ""))
    return None


def record(
    gateway: Gateway, *, control_repo: str, log_issue: int, stop: StopRecord, bot: str
) -> StopRecord:
    """Record ``stop`` on the run's log issue once: a stop already there is kept."""
    path = f"/repos/{control_repo}/issues/{log_issue}/comments"
    found = stop_of(gateway.paginate(path), bot=bot)
    if found is not None:
        return found
    mine = StopRecord(stop.actor, stop.url, stop.why, nonce=new_nonce())
    post_marked_comment(
        gateway,
        control_repo,
        log_issue,
        body(mine),
        kind="stop",
        nonce=mine.nonce,
        bot=bot,
        what="the stop record",
    )
    return mine
