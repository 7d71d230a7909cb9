"""The run at a glance (pure): the one-line outcome put at the top of the log issue's
body once the run is over, and each pushed branch's diff summary.

The line says what happened, from records the agent cannot write: the outcome and
the turns Claude Code's result counted, the time from the run's start to its
write-up, the model proxy's cost, what the MCP server's audit says was created (a
pushed branch with its files and lines, from the MCP server's ``pushes.jsonl``), the
network as it was, and the Actions run. Between hidden markers, so a write-up run
again replaces it instead of adding a second.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

START, END = "<!-- tusk:outcome -->", "<!-- /tusk:outcome -->"
PUSHES_FILE = "pushes.jsonl"  # the MCP server writes it (tusk.mcp.gate.recorder), one line a push
BODY_LIMIT = 65536


class PushedBranch(BaseModel):
    """One branch the MCP server pushed, as git counted its changes."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    branch: str
    url: str = ""
    files: int = 0
    additions: int = 0
    deletions: int = 0

    def stat(self) -> str:
        return f"{self.files} file(s), +{self.additions} −{self.deletions}"


def read_pushes(path: Path) -> list[PushedBranch]:
    """The branches pushed in this run, the last push of each branch kept."""
    if not path.is_file():
        return []
    found: dict[str, PushedBranch] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            pushed = PushedBranch.model_validate(json.loads(line))
        except ValueError:
            continue
        found[pushed.branch] = pushed
    return list(found.values())


def duration(seconds: float | None) -> str:
    """``2 h 5 min``, ``3 min 12 s``, ``45 s``; empty when unknown."""
    if seconds is None or seconds < 0:
        return ""
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min {secs} s" if minutes else f"{secs} s"


def created_line(kinds: Sequence[str], pushes: Sequence[PushedBranch]) -> str:
    """``1 comment, 1 pull request, branch fix-typo (1 file(s), +1 −1)`` or ``nothing``."""
    counts: dict[str, int] = {}
    for kind in kinds:
        if kind != "branch":
            counts[kind] = counts.get(kind, 0) + 1
    words = [f"{n} {kind.replace('_', ' ')}" for kind, n in counts.items()]
    words += [f"branch `{p.branch}` ({p.stat()})" for p in pushes]
    return ", ".join(words) or "nothing"


def outcome_line(
    *,
    mark: str,
    headline: str,
    seconds: float | None,
    turns: int | None,
    cost: str,
    created: str,
    network: str,
    run_url: str,
) -> str:
    parts = [f"{mark} **{headline}**"]
    if took := duration(seconds):
        parts.append(took)
    if turns is not None:
        parts.append(f"{turns} turn(s)")
    if cost:
        parts.append(cost)
    parts.append(f"created: {created}")
    if network:
        parts.append(f"network: {network}")
    if run_url:
        parts.append(f"[Actions run]({run_url})")
    return " · ".join(parts)


def with_outcome(body: str, line: str) -> str:
    """``body`` with ``line`` on top (after a leading hidden marker, which stays first),
    replacing one put there before; cut at the end to stay within GitHub's limit."""
    if START in body and END in body:
        head, rest = body.split(START, 1)
        body = head + rest.split(END, 1)[1].lstrip("\n")
    first, sep, rest = body.partition("\n")
    lead, body = (first + "\n", rest) if first.startswith("<!--") and sep else ("", body)
    block = f"{START}\n{line}\n{END}\n\n"
    text = lead + block + body
    return text if len(text) <= BODY_LIMIT else text[: BODY_LIMIT - 1] + "…"
