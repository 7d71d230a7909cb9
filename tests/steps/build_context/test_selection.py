"""A3 filtering rules as pure functions: the 3:1 walk, review scope, history, memory."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from tusk.steps.build_context.selection import (
    gaps,
    latest_batch,
    latest_entries,
    newest_within,
    pick_by_ratio,
    review_scope,
    visit_order,
)

T0 = datetime(2026, 11, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("count", "order"),
    [
        (0, []),
        (1, [0]),
        (3, [2, 1, 0]),
        (4, [3, 2, 1, 0]),
        (8, [7, 6, 5, 0, 4, 3, 2, 1]),
        (10, [9, 8, 7, 0, 6, 5, 4, 1, 3, 2]),
    ],
)
def test_visit_order_takes_three_newest_for_each_oldest(count: int, order: list[int]) -> None:
    assert visit_order(count) == order


@pytest.mark.parametrize(
    ("sizes", "budget", "kept"),
    [
        # everything fits: everything kept
        ([10] * 5, 1000, (0, 1, 2, 3, 4)),
        # room for four of eight: three from the newest end, one from the oldest
        ([10] * 8, 40, (0, 5, 6, 7)),
        # room for five: the walk goes back to the newest end
        ([10] * 8, 50, (0, 4, 5, 6, 7)),
        # room for eight of twelve: 6 newest, 2 oldest
        ([10] * 12, 80, (0, 1, 6, 7, 8, 9, 10, 11)),
        # no budget: nothing
        ([10] * 3, 0, ()),
        # a budget already overspent by fixed parts: nothing, and no crash
        ([10] * 3, -500, ()),
        # the newest is too big alone: it is left out, smaller ones still fit
        ([10, 10, 10, 10, 38000], 100, (0, 1, 2, 3)),
        # an exact fit is kept
        ([25, 25], 50, (0, 1)),
    ],
)
def test_pick_by_ratio_rules(sizes: list[int], budget: int, kept: tuple[int, ...]) -> None:
    selection = pick_by_ratio(sizes, budget)
    assert selection.kept == kept
    assert set(selection.left_out) == set(range(len(sizes))) - set(kept)
    assert selection.kept_chars == sum(sizes[i] for i in kept)
    assert selection.kept_chars <= max(budget, 0)
    assert selection.kept_chars + selection.left_out_chars == sum(sizes)


def test_one_huge_comment_does_not_hide_all_older_ones() -> None:
    sizes = [100] * 20 + [38000] + [100] * 3
    selection = pick_by_ratio(sizes, 2000)
    assert 20 not in selection.kept
    assert len(selection.kept) == 20


@pytest.mark.parametrize(
    ("kept", "count", "runs"),
    [
        ((), 3, [(0, 3)]),
        ((0, 1, 2), 3, []),
        ((0, 5, 6, 7), 8, [(1, 4)]),
        ((1, 3), 5, [(0, 1), (2, 1), (4, 1)]),
    ],
)
def test_gaps_are_the_runs_of_left_out_indices(
    kept: tuple[int, ...], count: int, runs: list[tuple[int, int]]
) -> None:
    assert gaps(kept, count) == runs


@dataclass(frozen=True)
class R:
    id: int
    created_at: datetime


@dataclass(frozen=True)
class C:
    pull_request_review_id: int | None
    created_at: datetime | None


REVIEWS = [R(1, T0), R(2, T0 + timedelta(hours=1)), R(3, T0 + timedelta(hours=2))]
COMMENTS = [
    C(1, T0),
    C(1, T0 + timedelta(minutes=1)),
    C(2, T0 + timedelta(hours=1)),
    C(3, T0 + timedelta(hours=2)),
    C(3, T0 + timedelta(hours=2, minutes=1)),
    C(None, None),
]


@pytest.mark.parametrize(
    ("trigger_review", "reviews", "comments", "batch", "rule"),
    [
        # triggered inside review 1: that review and its whole batch only
        (1, (0,), (0, 1), 1, "trigger-review"),
        # triggered inside review 2
        (2, (1,), (2,), 2, "trigger-review"),
        # triggered in an ordinary comment: all reviews + the latest batch (review 3)
        (None, (0, 1, 2), (3, 4), 3, "all-reviews"),
    ],
)
def test_review_scope_rules(
    trigger_review: int | None,
    reviews: tuple[int, ...],
    comments: tuple[int, ...],
    batch: int | None,
    rule: str,
) -> None:
    scope = review_scope(REVIEWS, COMMENTS, trigger_review_id=trigger_review)
    assert (scope.reviews, scope.review_comments, scope.batch_id, scope.rule) == (
        reviews,
        comments,
        batch,
        rule,
    )


def test_latest_batch_is_the_batch_of_the_newest_review_comment_not_the_highest_id() -> None:
    comments = [C(50, T0 + timedelta(hours=3)), C(90, T0)]
    assert latest_batch(comments) == 50


def test_no_review_comments_means_no_batch() -> None:
    scope = review_scope(REVIEWS, [], trigger_review_id=None)
    assert scope.review_comments == ()
    assert scope.batch_id is None
    assert scope.reviews == (0, 1, 2)


def test_history_keeps_the_latest_entries_whole_however_long() -> None:
    entries = ["x" * 5000, *[f"run {i}" for i in range(14)]]
    kept = latest_entries(entries, 10)
    assert kept.items == tuple(entries[:10])
    assert kept.items[0] == "x" * 5000
    assert kept.left_out == 5


@pytest.mark.parametrize(
    ("sizes", "cap", "kept", "left_out"),
    [
        ([100, 100, 100], 1000, 3, 0),
        ([100, 100, 100], 250, 2, 1),
        ([100, 100, 100], 300, 3, 0),
        ([500, 10, 10], 400, 0, 3),  # the newest does not fit: the walk ends there
        ([], 400, 0, 0),
    ],
)
def test_memory_keeps_the_newest_within_the_cap(
    sizes: list[int], cap: int, kept: int, left_out: int
) -> None:
    entries = ["m" * size for size in sizes]
    result = newest_within(entries, cap, len)
    assert len(result.items) == kept
    assert result.items == tuple(entries[:kept])
    assert result.left_out == left_out
    assert result.left_out_chars == sum(sizes[kept:])
