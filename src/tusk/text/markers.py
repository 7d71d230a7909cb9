"""Hidden markers Tusk writes into GitHub content and reads back.

A marker is an HTML comment, invisible on github.com:
``<!-- tusk:<kind> {"k": "v"} -->``. Anyone can type an HTML comment, so a
marker counts only on content authored by the bot, or living in the control
repository (``is_trusted_author``); callers must check that before acting.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal

MarkerKind = Literal[
    "job",
    "backlink",
    "state",
    "go-away",
    "entry",
    "blocklist-change",
    "audit",
    "progress",
    "writeup",
    "takeover",
    "usage",
    "limit",
    "approval",
    "preview",
    "verdict",
    "status",
    "undo",
    "followup",
    "followup-delivered",
    "followup-carried",
    "stop",
    "stop-reply",
    "stale",
    "rerun",
    "conversation",
    "attestation",
]

_MARKER_RE = re.compile(r"<!-- tusk:(?P<kind>[a-z-]+) (?P<data>\{.*?\}) -->")


MARKER_OPENING = "<!-- tusk:"
NEUTRAL_MARKER_OPENING = "<!-- tusk :"


def neutralise_markers(text: str) -> str:
    """Break every Tusk marker opening in ``text``: for what the agent wrote or made
    Tusk write under the bot's name, where a marker would be trusted (a memory entry,
    a blocklist change, a job claim, an audit part)."""
    while MARKER_OPENING in text:
        text = text.replace(MARKER_OPENING, NEUTRAL_MARKER_OPENING)
    return text


def render_marker(kind: MarkerKind, data: Mapping[str, Any]) -> str:
    payload = json.dumps(dict(data), sort_keys=True, separators=(",", ":"))
    # "--" cannot appear inside an HTML comment; JSON escapes keep it out.
    payload = payload.replace("--", "\\u002d\\u002d").replace(">", "\\u003e")
    return f"<!-- tusk:{kind} {payload} -->"


def parse_markers(body: str | None, kind: MarkerKind) -> list[dict[str, Any]]:
    """Every well-formed marker of ``kind`` in ``body``, in order."""
    found = []
    for match in _MARKER_RE.finditer(body or ""):
        if match.group("kind") != kind:
            continue
        try:
            data = json.loads(match.group("data"))
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            found.append(data)
    return found


def first_marker(body: str | None, kind: MarkerKind) -> dict[str, Any] | None:
    markers = parse_markers(body, kind)
    return markers[0] if markers else None


def is_trusted_author(
    *, author: str | None, bot: str, repo: str | None = None, control_repo: str | None = None
) -> bool:
    """A marker is trusted only on the bot's own content, or in the control repository.

    In the control repository only the bot and its operators can write issues
    that Tusk reads state from, so the repository itself vouches for them.
    """
    if author is not None and author.lower() == bot.lower():
        return True
    return bool(repo and control_repo and repo.lower() == control_repo.lower())


def job_marker(jobid: str) -> str:
    return render_marker("job", {"jobid": jobid})


def trusted_job_id(
    body: str | None, *, author: str | None, bot: str, repo: str, control_repo: str
) -> str | None:
    """The job id a log issue carries, if its marker may be trusted."""
    if not is_trusted_author(author=author, bot=bot, repo=repo, control_repo=control_repo):
        return None
    marker = first_marker(body, "job")
    value = marker.get("jobid") if marker else None
    return value if isinstance(value, str) else None


def backlink_footer(
    *, log_issue_url: str, bot: str, go_away_phrase: str, jobid: str, nonce: str | None = None
) -> str:
    """The footer stamped on everything the agent posts (MISSION M9). ``nonce`` marks
    one create, so a post whose answer was lost can be found instead of repeated."""
    data = {"jobid": jobid, "log": log_issue_url, **({"nonce": nonce} if nonce else {})}
    return (
        "\n\n---\n"
        # No "@" before the bot's name: quoting the footer must not mention the bot.
        f"<sub>🤖 Posted by {bot}'s agent · [run log]({log_issue_url}) · "
        f"comment `@{bot} {go_away_phrase}` to remove the bot from your repositories</sub>\n"
        + render_marker("backlink", data)
    )


def strip_backlink_footer(body: str) -> str:
    """The body without a footer ``backlink_footer`` added (for comparing edits)."""
    index = body.rfind("\n\n---\n<sub>🤖 Posted by ")
    return body[:index] if index != -1 else body
