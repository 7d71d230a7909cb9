"""Waiting on GitHub: looks spaced by doubling waits, within a budget of seconds.

GitHub does several things eventually: a fork is created asynchronously, an
artifact shows in the listing after its upload, a listing catches up with a
write. Every loop that waits for one of them uses ``Backoff``: the first wait,
doubling up to the longest, never past the budget. The sleep and the clock
are injected, so tests wait in no real time.

The budget is spent by the clock or by the sleeps, whichever says more: a
slow look counts against it, and an injected sleep that does not move the
clock still ends the wait.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Backoff:
    """One wait for something GitHub will do: ``wait()`` before each look after the first."""

    budget: float
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    first: float = 1.0
    longest: float = 15.0
    slept: float = field(default=0.0, init=False)

    def __post_init__(self) -> None:
        self._start = self.clock()
        self._delay = self.first

    @property
    def spent(self) -> float:
        """Seconds spent so far: by the clock or by the sleeps, whichever says more."""
        return max(self.clock() - self._start, self.slept)

    @property
    def remaining(self) -> float:
        return max(0.0, self.budget - self.spent)

    def wait(self) -> bool:
        """Sleep before the next look and say True; say False once the budget is spent."""
        remaining = self.remaining
        if remaining <= 0:
            return False
        step = min(self._delay, remaining)
        self.sleep(step)
        self.slept += step
        self._delay = min(self._delay * 2, self.longest)
        return True
