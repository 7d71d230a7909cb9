"""``@bot stop`` as the run sees it (MISSION C2): the bot's stop record on its log issue.

The supervisor asks at every poll; GitHub is read at most once per
``interval`` (the MCP server's blocklist-check interval), so the session ends
within that interval of the stop being recorded. Seen once, the stop is
written into the runner-only run folder first (``tusk.contracts.passes``): the MCP
server refuses every write from then on, before the session is even ended.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tusk.contracts.models import RunMetadata
from tusk.contracts.passes import write_stopped
from tusk.errors import TuskError
from tusk.github.gateway import Gateway
from tusk.issues.stop_record import StopRecord, stop_of
from tusk.steps.run_claude.session.watch import StopReason


@dataclass
class StopWatch:
    gateway: Gateway
    run: RunMetadata
    bot: str
    run_dir: Path
    interval: float
    clock: Callable[[], float] = time.monotonic
    seen: StopRecord | None = None
    _checked_at: float | None = None

    def check(self) -> StopReason | None:
        if self.seen is None and self._due():
            self._checked_at = self.clock()
            self.seen = self._read()
            if self.seen is not None:
                write_stopped(self.run_dir, self.seen.said())
        if self.seen is None:
            return None
        return StopReason("stopped", self.seen.said())

    def _due(self) -> bool:
        return self._checked_at is None or self.clock() - self._checked_at >= self.interval

    def _read(self) -> StopRecord | None:
        path = f"/repos/{self.run.control_repo}/issues/{self.run.log_issue_number}/comments"
        try:
            return stop_of(self.gateway.paginate(path), bot=self.bot)
        except TuskError:
            return None  # GitHub failing: asked again after the interval
