"""SIGTERM and SIGINT as a cancellation of the run, not a traceback.

GitHub Actions cancels a step (a cancelled workflow, ``timeout-minutes``) by
sending SIGINT, then SIGTERM a few seconds later, then SIGKILL. The first
signal raises ``Cancelled`` in the main thread wherever it is (reading Claude
Code's stream, waiting for a request); the run then stops the agent and
writes up the outcome ``cancelled``. Later signals are only noted, so they
cannot cut that write-up short; once the write-up has started (``shield``)
even the first signal is only noted. SIGKILL cannot be caught: the
``if: always()`` clean-up step finishes the write-up instead.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import FrameType

SIGNALS = (signal.SIGTERM, signal.SIGINT)


class Cancelled(BaseException):
    """The run was told to stop. A BaseException, so no ``except Exception`` swallows it."""

    def __init__(self, signal_name: str) -> None:
        self.signal_name = signal_name
        super().__init__(f"cancelled by {signal_name}")


@dataclass
class Cancellation:
    """What the signal handlers saw, and whether they may still interrupt."""

    received: list[str] = field(default_factory=list)
    raised: bool = False
    shielded: bool = False

    def shield(self) -> None:
        """From now on, signals are noted but do not interrupt (the write-up runs)."""
        self.shielded = True

    @property
    def requested(self) -> bool:
        return bool(self.received)

    def handle(self, signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        self.received.append(name)
        if self.raised or self.shielded:
            return
        self.raised = True
        raise Cancelled(name)


@contextlib.contextmanager
def cancellable() -> Iterator[Cancellation]:
    """Turn SIGTERM/SIGINT into ``Cancelled`` while the block runs (main thread only)."""
    state = Cancellation()
    if threading.current_thread() is not threading.main_thread():
        yield state  # signals reach only the main thread; nothing to install here
        return
    previous = {signum: signal.signal(signum, state.handle) for signum in SIGNALS}
    try:
        yield state
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
