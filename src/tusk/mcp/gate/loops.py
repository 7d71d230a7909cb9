"""Loop detection on the server's own calls (MISSION M8, A6).

A loop is ``threshold`` consecutive calls with the same tool, the same
arguments and the same result (refusals included: a model retrying a refused
write gets the same refusal). Any different call or result breaks the streak.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class LoopVerdict:
    looping: bool
    repeats: int


class LoopDetector:
    def __init__(self, threshold: int) -> None:
        if threshold < 2:
            raise ValueError("threshold must be >= 2")
        self.threshold = threshold
        self._last: tuple[str, str, str] | None = None
        self._repeats = 0
        self._lock = threading.Lock()
        self.tripped = False

    def observe(self, tool: str, args_digest: str, result_digest: str) -> LoopVerdict:
        """Record one finished call; ``looping`` once the streak reaches the threshold."""
        key = (tool, args_digest, result_digest)
        with self._lock:
            if key == self._last:
                self._repeats += 1
            else:
                self._last = key
                self._repeats = 1
            looping = self._repeats >= self.threshold
            self.tripped = self.tripped or looping
            return LoopVerdict(looping=looping, repeats=self._repeats)
