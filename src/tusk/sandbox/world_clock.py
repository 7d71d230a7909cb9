"""The local GitHub's time: a clock that only moves forward by whole seconds (or as
a scenario sets it), and GitHub's ISO 8601 spelling of a moment."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


class Clock:
    """Timestamps for state changes: real time, but strictly increasing by whole seconds.

    ``Last-Modified`` has one-second resolution, so two changes inside one
    second must still get different times or a poller would miss the second.

    A scenario with a fixed start runs a clock of its own: it starts at ``start``
    and moves on only as much as tests let time pass (``advance``: the admin
    clock, injected sleeps) and by a second for each change.
    """

    def __init__(self, start: datetime | None = None) -> None:
        self._last = (start or _utc_now()) - timedelta(seconds=1)
        self._fixed = start is not None
        self._floor = self._last  # a fixed clock's present is never earlier than this
        self._carry = 0.0  # a fraction of a second let pass, not yet a whole one

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` pass (a fixed clock only; a real one passes by itself)."""
        if not self._fixed:
            return
        total = self._carry + max(seconds, 0.0)
        whole = int(total)
        self._carry = total - whole
        if whole:
            self._floor = self.now() + timedelta(seconds=whole)

    def tick(self) -> datetime:
        candidate = self._last + timedelta(seconds=1)
        candidate = max(candidate, self._floor if self._fixed else _utc_now())
        self._last = candidate
        return candidate

    def peek(self) -> datetime:
        return self._last

    def now(self) -> datetime:
        """The server's idea of the present (its ``Date`` header): real time, or for a
        scenario with a fixed start, the time passed so far and at least one second
        after the latest change (what was just changed is never "this very second")."""
        if self._fixed:
            return max(self._last + timedelta(seconds=1), self._floor)
        return max(self._last, _utc_now())


def _utc_now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str | datetime) -> datetime:
    if isinstance(text, datetime):
        moment = text
    else:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)
