"""The read throttle and the loop detector, on an injected clock."""

from __future__ import annotations

import pytest

from tusk.mcp.gate.loops import LoopDetector
from tusk.mcp.gate.throttle import SlidingWindow


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_read_burst_beyond_the_window_is_throttled_until_the_oldest_read_expires() -> None:
    clock = Clock()
    window = SlidingWindow(limit=3, window=10.0, clock=clock)
    for _ in range(3):
        assert window.try_acquire() is None
        clock.now += 2
    assert window.try_acquire() == pytest.approx(4.0)
    clock.now += 4
    assert window.try_acquire() is None  # the first read left the window
    assert window.try_acquire() is not None


def test_sliding_window_is_not_a_fixed_bucket() -> None:
    clock = Clock()
    window = SlidingWindow(limit=2, window=10.0, clock=clock)
    window.try_acquire()
    clock.now += 9
    window.try_acquire()
    clock.now += 2  # a fixed 10 s bucket would have reset here
    assert window.try_acquire() is None
    assert window.try_acquire() is not None


def test_six_identical_calls_with_identical_results_are_a_loop() -> None:
    detector = LoopDetector(6)
    verdicts = [detector.observe("get_issue", "a", "r") for _ in range(6)]
    assert [v.looping for v in verdicts] == [False] * 5 + [True]
    assert detector.tripped


@pytest.mark.parametrize(
    "breaker",
    [("get_issue", "a", "other result"), ("get_issue", "b", "r"), ("list_branches", "a", "r")],
)
def test_a_different_call_or_result_breaks_the_streak(breaker: tuple[str, str, str]) -> None:
    detector = LoopDetector(3)
    detector.observe("get_issue", "a", "r")
    detector.observe("get_issue", "a", "r")
    detector.observe(*breaker)
    assert not detector.observe("get_issue", "a", "r").looping
    assert not detector.tripped


def test_blocklist_watch_asks_again_only_when_its_check_is_30_seconds_old() -> None:
    from tusk.contracts.models import BlockedUser, Blocklist
    from tusk.mcp.gate.blocklist_watch import BlocklistWatch

    now = [0.0]
    asked: list[str | None] = []
    changes = iter([False, True])
    reads: list[int] = []
    sent_away = Blocklist(users=(BlockedUser(user="alice", at="2026-01-01T00:00:00Z"),))

    def probe(etag: str | None) -> tuple[bool, str | None]:
        asked.append(etag)
        return (True, "e1") if etag is None else (next(changes), f"e{len(asked)}")

    def read() -> Blocklist:
        reads.append(1)
        return Blocklist() if len(reads) < 2 else sent_away

    watch = BlocklistWatch(read=read, probe=probe, clock=lambda: now[0])
    assert watch.start() == Blocklist() and asked == [None]
    now[0] = 29.9
    assert watch.current() == Blocklist() and asked == [None]  # fresh enough
    now[0] = 30
    assert watch.current() == Blocklist() and asked == [None, "e1"] and len(reads) == 1  # 304
    now[0] = 61
    assert watch.current() == sent_away and len(reads) == 2  # changed: read again


def test_a_fresh_blocklist_is_taken_on_the_event_loop_and_an_old_one_asks_github() -> None:
    # Before each write: a check younger than 30 s is reused without a worker thread (no
    # request to make); an older one goes to a thread, where the probe asks GitHub.
    import asyncio
    import threading

    from tusk.contracts.models import Blocklist
    from tusk.mcp.gate.blocklist_watch import BlocklistWatch
    from tusk.mcp.server.runtime import Runtime

    now = [0.0]
    probed_on: list[str] = []

    def probe(etag: str | None) -> tuple[bool, str | None]:
        probed_on.append(threading.current_thread().name)
        return False, "e1"

    watch = BlocklistWatch(read=Blocklist, probe=probe, clock=lambda: now[0])
    watch.start()
    probed_on.clear()
    runtime = object.__new__(Runtime)  # only the blocklist is asked of it
    runtime.blocklist_watch = watch
    assert watch.fresh() == Blocklist()
    assert asyncio.run(runtime.fresh_blocklist()) == Blocklist() and probed_on == []
    now[0] = 30
    assert watch.fresh() is None
    assert asyncio.run(runtime.fresh_blocklist()) == Blocklist()
    assert len(probed_on) == 1 and probed_on[0] != threading.current_thread().name
