"""Keep one token's content-creating requests under GitHub's content-creation limit.

GitHub: "in general, no more than 80 content-generating requests per minute
and no more than 500 content-generating requests per hour"; "if you are
making a large number of POST, PATCH, PUT, or DELETE requests for a single
user or client ID, wait at least one second between each request"
(docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api and
…/best-practices-for-using-the-rest-api).

Tusk's bursts (go-away deleting a person's traces, a long transcript posted
as many comments) are paced here, inside the gateway, so no caller has to
remember: the writes of an ordinary step go out at once (``burst``, 20), after
that one every 1.2 seconds (``per_second``), so never more than 70 in any
minute (under 80), and never more than ``per_hour`` (450, under 500) in any
hour. The limit is per user and other processes of the
same bot write too, so pacing only makes a refusal rare; the gateway still
waits out any 403/429 GitHub sends.

Time is virtual: the pacer schedules each write at the moment it will go out,
so an injected sleep that does not move the clock paces exactly as a real one.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

HOUR = 3600.0


@dataclass
class ContentPacer:
    burst: int = 20
    per_second: float = 1 / 1.2
    per_hour: int = 450
    _tokens: float = field(default=-1.0, repr=False)
    _last: float = field(default=float("-inf"), repr=False)
    _sent: deque[float] = field(default_factory=deque, repr=False)

    def __post_init__(self) -> None:
        if self.burst < 1 or self.per_second <= 0 or self.per_hour < 1:
            raise ValueError("pacing needs burst >= 1, per_second > 0 and per_hour >= 1")
        self._tokens = float(self.burst)

    def schedule(self, now: float) -> float:
        """Seconds to wait before the next content-creating request; it is then counted.

        The caller is taken to have slept until the previous write went out, even
        if its clock says otherwise (an injected sleep): waits never pile up."""
        start = max(now, self._last)
        here = start
        if self._last != float("-inf"):
            refill = (start - self._last) * self.per_second
            self._tokens = min(float(self.burst), self._tokens + refill)
        if self._tokens < 1.0:
            start += (1.0 - self._tokens) / self.per_second
            self._tokens = 1.0
        while self._sent and self._sent[0] <= start - HOUR:
            self._sent.popleft()
        if len(self._sent) >= self.per_hour:
            start = max(start, self._sent[-self.per_hour] + HOUR)
        self._tokens -= 1.0
        self._last = start
        self._sent.append(start)
        return start - here
