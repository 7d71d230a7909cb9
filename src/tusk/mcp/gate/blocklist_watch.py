"""The blocklist as the server sees it before each write: never older than 30 s (M7, G4).

The blocklist issue changes while a run is in flight when someone sends the
bot away. Before each write the server asks GitHub whether the blocklist
issues changed, with a conditional request (``If-None-Match``) that GitHub
answers 304 without counting it against the rate limit; only a change costs
a full read. Between writes a check is reused for ``max_age`` seconds.

The probe lists the blocklist issues by label, most recently updated first:
a go-away first records its change as a comment and then rewrites the body,
and either moves the issue's ``updated_at`` (and its comment count), as a
rollover to a new issue does, so the listing's ETag changes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from tusk.contracts.models import Blocklist
from tusk.github.gateway import Gateway

MAX_AGE_SECONDS = 30.0
# (the ETag of the last answer) -> (changed since, the new ETag)
Probe = Callable[[str | None], tuple[bool, str | None]]


def listing_probe(gateway: Gateway, control_repo: str, label: str) -> Probe:
    """A conditional request on the blocklist issues: (changed since ``etag``, new ETag)."""

    def probe(etag: str | None) -> tuple[bool, str | None]:
        response = gateway.conditional_get(
            f"/repos/{control_repo}/issues",
            params={"labels": label, "state": "all", "sort": "updated", "per_page": 100},
            etag=etag,
        )
        return response.status != 304, response.header("etag") or etag

    return probe


@dataclass
class BlocklistWatch:
    """Keeps ``blocklist`` fresh within ``max_age`` seconds of each ``current()`` call."""

    read: Callable[[], Blocklist]
    probe: Probe
    max_age: float = MAX_AGE_SECONDS
    clock: Callable[[], float] = time.monotonic
    blocklist: Blocklist = field(default_factory=Blocklist)
    _etag: str | None = None
    _checked_at: float | None = None

    def start(self) -> Blocklist:
        """The first read: the probe first, so a change during the read shows next time."""
        _, self._etag = self.probe(None)
        self.blocklist = self.read()
        self._checked_at = self.clock()
        return self.blocklist

    def fresh(self) -> Blocklist | None:
        """The blocklist when the last check is younger than ``max_age``, else None (then
        ``current`` asks GitHub). No I/O: the server asks it before each write without
        leaving its event loop."""
        return self.blocklist if self._young(self.clock()) else None

    def _young(self, now: float) -> bool:
        return self._checked_at is not None and now - self._checked_at < self.max_age

    def current(self) -> Blocklist:
        """The blocklist, checked again when the last check is ``max_age`` old."""
        now = self.clock()
        if self._young(now):
            return self.blocklist
        changed, etag = self.probe(self._etag)
        if changed or self._checked_at is None:
            self.blocklist = self.read()
        self._etag, self._checked_at = etag, now
        return self.blocklist
