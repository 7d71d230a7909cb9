"""One backoff for every wait on GitHub: doubling waits, a budget, an injected clock."""

from __future__ import annotations

from tusk.github.backoff import Backoff


class FakeTime:
    """A clock that each sleep moves, plus ``look`` seconds per look."""

    def __init__(self, look: float = 0.0) -> None:
        self.now = 100.0
        self.look = look
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds + self.look


def waits(backoff: Backoff) -> int:
    count = 0
    while backoff.wait():
        count += 1
    return count


def test_waits_double_up_to_the_longest_and_the_last_is_cut_to_the_budget() -> None:
    fake = FakeTime()
    backoff = Backoff(20.0, sleep=fake.sleep, clock=fake.clock, first=1.0, longest=4.0)
    assert waits(backoff) == 7
    assert fake.slept == [1.0, 2.0, 4.0, 4.0, 4.0, 4.0, 1.0]
    assert sum(fake.slept) == 20.0 and backoff.remaining == 0.0


def test_slow_looks_spend_the_budget_too() -> None:
    fake = FakeTime(look=10.0)  # each look itself takes ten seconds
    backoff = Backoff(30.0, sleep=fake.sleep, clock=fake.clock, first=1.0, longest=15.0)
    assert waits(backoff) == 3
    assert fake.slept == [1.0, 2.0, 4.0] and fake.now - 100.0 == 37.0


def test_a_sleep_that_does_not_move_the_clock_still_ends_the_wait() -> None:
    slept: list[float] = []
    backoff = Backoff(5.0, sleep=slept.append, clock=lambda: 0.0, first=2.0, longest=2.0)
    assert waits(backoff) == 3
    assert slept == [2.0, 2.0, 1.0]


def test_no_budget_means_no_wait_at_all() -> None:
    slept: list[float] = []
    assert Backoff(0.0, sleep=slept.append, clock=lambda: 0.0).wait() is False
    assert slept == []
