"""The run's live status on its log issue: one progress comment, kept up to date.

The run posts its progress comment as soon as it starts (``tusk.issues.lease``); while
Claude Code works, a ``ProgressReporter`` rewrites that comment at most every
``MIN_INTERVAL`` seconds, and only when something changed: the pass, the tool
calls so far, the writes made and refused (from the audit log), the model cost
so far (from the model proxy's meter) and the time spent. At the end it says
how the run ended and points at the write-up.

Pure: ``Tally`` (reads the event stream and the audit log incrementally),
``Snapshot`` and ``render_progress``, ``Throttle``. I/O: ``ProgressReporter``
(a thread with an injected clock and sleep, so tests never wait).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tusk.contracts.pricing import Spend, format_usd
from tusk.github.gateway import Gateway, GitHubError
from tusk.issues.usage import usage_marker
from tusk.steps.run_claude.writeup.transcript import TUSK_EVENT

log = logging.getLogger(__name__)

MIN_INTERVAL = 30.0  # seconds between two edits of the progress comment, at least
POLL_SECONDS = 5.0  # how often the reporter looks at the run folder


@dataclass(frozen=True)
class Snapshot:
    """What the progress comment says; equal snapshots are never posted twice."""

    pass_name: str = "starting"
    tool_calls: int = 0
    writes: int = 0
    refused: int = 0
    staged: int = 0
    cost: str = ""
    minutes: int = 0
    cost_usd: float | None = None  # read back by the limits across runs (tusk.issues.usage)
    budget_usd: float | None = None  # the run's budget, held against the requester's cap
    followups: int = 0  # follow-ups handed to the agent (MISSION C1)

    @property
    def budget_share(self) -> float:
        """The part of the budget spent so far (0 when either is unknown)."""
        if self.cost_usd is None or not self.budget_usd:
            return 0.0
        return self.cost_usd / self.budget_usd


@dataclass
class Tally:
    """Counts read from the run folder's files, each read from where it stopped."""

    events_path: Path
    audit_path: Path
    pass_name: str = "starting"
    tool_calls: int = 0
    writes: int = 0
    refused: int = 0
    staged: int = 0
    followups: int = 0
    _offsets: dict[Path, int] = field(default_factory=dict)

    def _new_lines(self, path: Path) -> list[str]:
        """Whole lines appended to ``path`` since the last read (a half-written last
        line waits for the next read)."""
        try:
            with path.open("rb") as handle:
                handle.seek(self._offsets.get(path, 0))
                data = handle.read()
        except OSError:
            return []
        end = data.rfind(b"\n") + 1
        self._offsets[path] = self._offsets.get(path, 0) + end
        return data[:end].decode("utf-8", errors="replace").splitlines()

    def update(self) -> None:
        for line in self._new_lines(self.events_path):
            event = _json(line)
            if event.get("type") == TUSK_EVENT and event.get("subtype") == "pass":
                self.pass_name = str(event.get("name") or self.pass_name)
            elif event.get("type") == TUSK_EVENT and event.get("subtype") == "followup":
                self.followups += 1
            elif event.get("type") == "assistant":
                content = (event.get("message") or {}).get("content") or []
                self.tool_calls += sum(
                    1
                    for block in content
                    if isinstance(block, dict) and block.get("type") == "tool_use"
                )
        for line in self._new_lines(self.audit_path):
            record = _json(line)
            decision = record.get("decision")
            if decision in ("refused", "failed"):
                self.refused += 1
            elif decision == "staged":
                self.staged += 1
            elif decision == "allowed" and record.get("kind") == "write":
                self.writes += 1


def _json(line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def snapshot(tally: Tally, spend: Spend | None, seconds: float) -> Snapshot:
    cost = ""
    if spend is not None:
        cost = f"{format_usd(spend.cost_usd)} of {format_usd(spend.budget_usd)}"
    return Snapshot(
        pass_name=tally.pass_name,
        tool_calls=tally.tool_calls,
        writes=tally.writes,
        refused=tally.refused,
        staged=tally.staged,
        cost=cost,
        minutes=int(seconds // 60),
        cost_usd=spend.cost_usd if spend is not None else None,
        followups=tally.followups,
        budget_usd=spend.budget_usd if spend is not None else None,
    )


def render_progress(snap: Snapshot, *, now: datetime, final: str | None = None) -> str:
    """The progress comment's text (below its hidden marker)."""
    if final is not None:
        head = f"{final} The write-up follows below."
    else:
        head = (
            f"⏳ **The agent is working.** This comment is updated at most every "
            f"{MIN_INTERVAL:g} s; last update {now.strftime('%Y-%m-%d %H:%M:%S')} UTC."
        )
    writes = f"{snap.writes}" + (f" (+{snap.staged} not performed)" if snap.staged else "")
    return (
        f"{head}\n\n"
        "| pass | tool calls | writes | refused | model cost so far | time |\n"
        "|---|---|---|---|---|---|\n"
        f"| {snap.pass_name} | {snap.tool_calls} | {writes} | {snap.refused} | "
        f"{snap.cost or '—'} | {snap.minutes} min |\n"
        + (
            f"{usage_marker(snap.cost_usd, snap.budget_usd, done=final is not None)}\n"
            if snap.cost_usd is not None
            else ""
        )
    )


@dataclass
class Throttle:
    """At most one edit per ``interval`` seconds of ``clock``."""

    interval: float = MIN_INTERVAL
    last: float | None = None

    def due(self, now: float) -> bool:
        return self.last is None or now - self.last >= self.interval

    def mark(self, now: float) -> None:
        self.last = now


# --------------------------------------------------------------------------- I/O


class ProgressReporter:
    """Keeps the progress comment ``comment_id`` on the log issue up to date."""

    def __init__(
        self,
        gateway: Gateway,
        *,
        repo: str,
        comment_id: int,
        run_dir: Path,
        spend: Callable[[], Spend | None] = lambda: None,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], datetime] = lambda: datetime.now(UTC),
        sleep_seconds: float = POLL_SECONDS,
        interval: float = MIN_INTERVAL,
        mirror: Callable[[Snapshot], None] | None = None,
    ) -> None:
        self.gateway = gateway
        self.mirror = mirror  # shown on the thread too (``thread_status``), after each edit
        self.path = f"/repos/{repo}/issues/comments/{comment_id}"
        self.tally = Tally(run_dir / "events.jsonl", run_dir / "audit.jsonl")
        self.spend = spend
        self.clock = clock
        self.wall = wall
        self.started = clock()
        self.throttle = Throttle(interval)
        self.sleep_seconds = sleep_seconds
        self.posted: Snapshot | None = None
        self.edits = 0
        self._marker: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _marker_line(self) -> str:
        """The comment's hidden marker (its first line), kept on every edit: the
        claim's lease reads it."""
        if self._marker is None:
            body = str(self.gateway.get(self.path).get("body") or "")
            first = body.split("\n", 1)[0]
            self._marker = first if first.startswith("<!-- tusk:") else ""
        return self._marker

    def current(self) -> Snapshot:
        self.tally.update()
        return snapshot(self.tally, self.spend(), self.clock() - self.started)

    def tick(self, *, final: str | None = None) -> bool:
        """Look once; edit the comment when something changed and the throttle allows
        (a final edit always goes). Returns whether the comment was edited."""
        with self._lock:
            snap = self.current()
            now = self.clock()
            if final is None and (snap == self.posted or not self.throttle.due(now)):
                return False
            text = render_progress(snap, now=self.wall(), final=final)
            try:
                marker = self._marker_line()
                body = f"{marker}\n{text}" if marker else text
                self.gateway.patch(self.path, json={"body": body})
            except GitHubError as error:
                log.warning("could not update the progress comment: %s", error)
                return False
            self.throttle.mark(now)
            self.posted = snap
            self.edits += 1
            if self.mirror is not None and final is None:
                self.mirror(snap)
            return True

    def start(self) -> None:
        def loop() -> None:
            while not self._stop.wait(self.sleep_seconds):
                self.tick()

        self._thread = threading.Thread(target=loop, name="tusk-progress", daemon=True)
        self._thread.start()

    def stop(self, final: str) -> None:
        """Stop the updates and say how the run ended."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        self.tick(final=final)
