"""The poller's conditional state, kept between runs in a small JSON file.

A scheduled ``tusk poll --once`` is a fresh process each time: without the
``Last-Modified`` of the previous run it cannot send ``If-Modified-Since``,
so every idle poll is a counted 200 instead of a free 304 ("a 304 means no
new notifications, leaving your current rate limit untouched",
docs.github.com/en/rest/activity/notifications). The file carries that date
and GitHub's ``X-Poll-Interval`` from one run to the next (the poll workflow
keeps it in the Actions cache; a cron host keeps it on disk).

It is a cache, never the truth: a missing, unreadable or foreign file (another
bot or API) only costs one counted request. Unread notifications stay on
GitHub, and a cycle that left a thread unread saves no date (``after_cycle``),
so the next run sees the thread again.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path

from tusk.poller.core import DEFAULT_POLL_INTERVAL, PollState

log = logging.getLogger(__name__)
VERSION = 1


def _identity(bot: str, api_url: str) -> dict[str, str]:
    return {"bot": bot.lower(), "api_url": api_url.rstrip("/")}


def load(path: Path, *, bot: str, api_url: str) -> PollState:
    """The saved state, or a fresh one when there is none that fits this poller."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return PollState()
    except (OSError, ValueError) as error:
        log.warning("poll state %s unreadable (%s); starting without it", path, error)
        return PollState()
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return PollState()
    if {k: data.get(k) for k in ("bot", "api_url")} != _identity(bot, api_url):
        log.info("poll state %s belongs to another bot or API; starting without it", path)
        return PollState()
    last_modified = data.get("last_modified")
    interval = data.get("poll_interval")
    etag = data.get("sweep_etag")
    swept_since = data.get("swept_since")
    return PollState(
        last_modified=last_modified if isinstance(last_modified, str) else None,
        sweep_etag=etag if isinstance(etag, str) else None,
        swept_since=swept_since if isinstance(swept_since, str) else None,
        poll_interval=float(interval)
        if isinstance(interval, int | float) and interval > 0
        else DEFAULT_POLL_INTERVAL,
    )


def save(path: Path, state: PollState, *, bot: str, api_url: str) -> bool:
    """Write ``state`` atomically; True when the file changed (the cache needs saving)."""
    data = {
        "version": VERSION,
        **_identity(bot, api_url),
        "last_modified": state.last_modified,
        "poll_interval": state.poll_interval,
        "sweep_etag": state.sweep_etag,
        "swept_since": state.swept_since,
    }
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except (OSError, ValueError):
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".poll-state-")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(temporary, path)
    return True
