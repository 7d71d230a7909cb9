"""Pacing content-creating requests under GitHub's content-creation limit, in virtual time."""

from __future__ import annotations

import itertools

import pytest

from tusk.github.gateway import is_content_request
from tusk.github.pacing import ContentPacer


def run(pacer: ContentPacer, writes: int, *, clock_moves: bool) -> list[float]:
    """When each write goes out; the clock follows the sleeps only if ``clock_moves``."""
    now, slept, times = 0.0, 0.0, []
    for _ in range(writes):
        wait = pacer.schedule(now)
        slept += wait
        times.append(slept)  # the process is where its sleeps took it
        if clock_moves:
            now += wait
    return times


def per_window(times: list[float], window: float) -> int:
    return max(sum(1 for t in times if start <= t < start + window) for start in times)


@pytest.mark.parametrize("clock_moves", [True, False])
def test_a_burst_goes_out_at_once_then_one_a_second(clock_moves: bool) -> None:
    times = run(ContentPacer(burst=10, per_second=1.0), 30, clock_moves=clock_moves)
    assert times[:10] == [0.0] * 10
    assert [round(b - a, 6) for a, b in itertools.pairwise(times[10:])] == [1.0] * 19
    assert per_window(times, 60) <= 80  # GitHub's content-creation limit per minute


def test_never_more_than_the_hourly_budget_in_any_hour() -> None:
    times = run(ContentPacer(burst=10, per_second=10.0, per_hour=450), 1000, clock_moves=True)
    assert per_window(times, 3600) == 450
    assert per_window(times, 60) <= 80 * 10  # per_second=10 here: only the hour binds


def test_a_quiet_spell_refills_the_burst() -> None:
    pacer = ContentPacer(burst=3, per_second=1.0)
    assert [pacer.schedule(0.0) for _ in range(4)] == [0.0, 0.0, 0.0, 1.0]
    assert [pacer.schedule(100.0) for _ in range(4)] == [0.0, 0.0, 0.0, 1.0]


def test_the_defaults_never_exceed_70_a_minute_nor_450_an_hour() -> None:
    times = run(ContentPacer(), 1000, clock_moves=True)
    assert times[:20] == [0.0] * 20
    assert per_window(times, 60) <= 70 and per_window(times, 3600) == 450


def test_nonsense_settings_are_refused() -> None:
    with pytest.raises(ValueError):
        ContentPacer(burst=0)


@pytest.mark.parametrize(
    ("method", "path", "content"),
    [
        ("POST", "/repos/a/b/issues/1/comments", True),
        ("DELETE", "/repos/a/b/issues/comments/5", True),
        ("PATCH", "/repos/a/b/issues/1", True),
        ("GET", "/repos/a/b/issues", False),
        ("PATCH", "/notifications/threads/7", False),
        ("POST", "/graphql", False),
        ("POST", "/api/v3/repos/a/b/issues", True),
        ("POST", "/api/graphql", False),
    ],
)
def test_what_counts_as_content_creation(method: str, path: str, content: bool) -> None:
    assert is_content_request(method, path) is content
