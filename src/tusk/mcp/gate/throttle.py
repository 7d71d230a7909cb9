"""Sliding-window throttle for the agent's reads (MISSION M6).

At most ``limit`` reads inside any ``window`` seconds. A read over the limit
is not queued: the caller learns how long until the oldest read in the window
expires, and tells the model to slow down.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable


class SlidingWindow:
    def __init__(
        self, *, limit: int, window: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if limit < 1 or window <= 0:
            raise ValueError("limit must be >= 1 and window > 0")
        self.limit = limit
        self.window = window
        self._clock = clock
        self._times: deque[float] = deque()
        self._lock = threading.Lock()

    def try_acquire(self) -> float | None:
        """Take one slot: None when granted, else seconds until one frees up."""
        with self._lock:
            now = self._clock()
            while self._times and self._times[0] <= now - self.window:
                self._times.popleft()
            if len(self._times) < self.limit:
                self._times.append(now)
                return None
            return max(self._times[0] + self.window - now, 0.0)
