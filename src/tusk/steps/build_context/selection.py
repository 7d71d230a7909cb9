"""A3: which parts of a thread fit the context. Pure functions over sizes and models.

The 3:1 rule, exactly: the thread's comments (the trigger excluded, it is
always kept whole) are visited in the repeating order *newest, newest,
newest, oldest*: three steps inward from the newest end for every one step
inward from the oldest end, until the two ends meet. Each visited comment is
kept when its size fits what is left of the budget, and left out otherwise;
the walk goes on after a left-out comment, so one huge comment does not hide
all the smaller ones behind it. Kept comments are shown in their original
order, with every run of left-out comments replaced by a line that counts it.

Reviews on a pull request are chosen by rule, not by budget:

* triggered inside a review (the review itself, or one of its review
  comments): that review and every review comment of its batch, in full;
* triggered anywhere else: every review, plus the latest batch of review
  comments (the comments of the most recently created review that has any).

History: the ``limit`` latest entries, never truncated. Memory: the newest
entries whose total stays within the cap; the first one that does not fit
ends the walk, so what is kept is always "the newest N".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, Protocol, TypeVar

NEWEST_PER_OLDEST = 3

T = TypeVar("T")


@dataclass(frozen=True)
class Selection:
    """Indices kept and left out, in original order, and their sizes."""

    kept: tuple[int, ...]
    left_out: tuple[int, ...]
    kept_chars: int
    left_out_chars: int
    budget: int

    @property
    def remaining(self) -> int:
        return max(self.budget - self.kept_chars, 0)


def visit_order(count: int, newest_per_oldest: int = NEWEST_PER_OLDEST) -> list[int]:
    """Indices 0..count-1 (oldest first) in the 3:1 newest-to-oldest visiting order.

    Step ``s`` of the walk takes the oldest unvisited index when ``s`` is the last
    of a cycle of ``newest_per_oldest + 1`` steps, else the newest; every step
    takes one, so the two ends meet after ``count`` steps. Built by slices.
    """
    cycle = newest_per_oldest + 1
    oldest = count // cycle
    newest = list(range(count - 1, oldest - 1, -1))
    order = [0] * count
    order[newest_per_oldest::cycle] = range(oldest)
    for step in range(newest_per_oldest):
        order[step::cycle] = newest[step::newest_per_oldest]
    return order


def pick_by_ratio(
    sizes: Sequence[int],
    budget: int,
    *,
    floor: int = 0,
    rough: Sequence[int] | None = None,
    bounds: Sequence[Sequence[int]] = (),
) -> Selection:
    """Choose comments by the 3:1 rule so that their sizes sum to at most ``budget``.

    ``sizes`` may be a lazy sequence that measures on access; cheap numbers
    spare it. Each of ``bounds`` (cheapest first) holds a lower bound of every
    item's size: an item with a bound over what is left cannot fit, so it is
    left out unmeasured, which is the choice measuring it would make.
    ``floor`` is the least any item can cost: once less than that is left, the
    walk stops. ``left_out_chars`` is summed over ``rough`` (a cheap size for
    every item; ``sizes`` when not given).
    """
    remaining = max(budget, 0)
    kept: list[int] = []
    for index in visit_order(len(sizes)):
        if remaining < floor or remaining == 0:
            break
        for bound in bounds:
            if bound[index] > remaining:
                break
        else:
            size = sizes[index]
            if size <= remaining:
                kept.append(index)
                remaining -= size
    kept_sorted = tuple(sorted(kept))
    left_out = tuple(
        index
        for first, length in gaps(kept_sorted, len(sizes))
        for index in range(first, first + length)
    )
    cheap = sizes if rough is None else rough
    if isinstance(cheap, list):  # all of them less the kept ones: the kept are few
        left_out_chars = sum(cheap) - sum(cheap[i] for i in kept_sorted)
    else:
        left_out_chars = sum(cheap[i] for i in left_out)
    return Selection(
        kept=kept_sorted,
        left_out=left_out,
        kept_chars=sum(sizes[i] for i in kept_sorted),
        left_out_chars=left_out_chars,
        budget=max(budget, 0),
    )


def gaps(kept_indices: Iterable[int], count: int) -> list[tuple[int, int]]:
    """Runs of left-out indices among 0..count-1 as (first, length), in order.

    Only the kept indices are walked, so a long thread with few kept costs little.
    """
    runs: list[tuple[int, int]] = []
    start = 0
    for index in sorted(i for i in set(kept_indices) if 0 <= i < count):
        if index > start:
            runs.append((start, index - start))
        start = index + 1
    if start < count:
        runs.append((start, count - start))
    return runs


class HasReview(Protocol):
    @property
    def id(self) -> int | str | None: ...

    @property
    def created_at(self) -> datetime | None: ...


class HasBatch(Protocol):
    @property
    def pull_request_review_id(self) -> int | None: ...

    @property
    def created_at(self) -> datetime | None: ...


R = TypeVar("R", bound=HasReview)
C = TypeVar("C", bound=HasBatch)


@dataclass(frozen=True)
class ReviewScope:
    reviews: tuple[int, ...]  # indices into the reviews, in original order
    review_comments: tuple[int, ...]
    batch_id: int | None  # the review whose comments were kept whole
    rule: str  # which rule chose them, said in the context


def latest_batch(comments: Sequence[HasBatch]) -> int | None:
    """The review id of the most recently created review comment's batch."""
    latest: tuple[datetime, int] | None = None
    for comment in comments:
        if comment.pull_request_review_id is None or comment.created_at is None:
            continue
        key = (comment.created_at, comment.pull_request_review_id)
        if latest is None or key > latest:
            latest = key
    return latest[1] if latest else None


def review_scope(
    reviews: Sequence[HasReview],
    comments: Sequence[HasBatch],
    *,
    trigger_review_id: int | None,
) -> ReviewScope:
    """Which reviews and review comments a PR context keeps (see the module docstring)."""
    if trigger_review_id is not None:
        kept_reviews = tuple(i for i, r in enumerate(reviews) if _same(r.id, trigger_review_id))
        kept_comments = tuple(
            i for i, c in enumerate(comments) if c.pull_request_review_id == trigger_review_id
        )
        return ReviewScope(kept_reviews, kept_comments, trigger_review_id, "trigger-review")
    batch = latest_batch(comments)
    kept_comments = tuple(
        i for i, c in enumerate(comments) if batch is not None and c.pull_request_review_id == batch
    )
    return ReviewScope(tuple(range(len(reviews))), kept_comments, batch, "all-reviews")


def _same(review_id: int | str | None, wanted: int) -> bool:
    return review_id is not None and str(review_id) == str(wanted)


@dataclass(frozen=True)
class Kept(Generic[T]):
    items: tuple[T, ...]
    left_out: int
    left_out_chars: int


def latest_entries(entries_newest_first: Sequence[T], limit: int) -> Kept[T]:
    """History: the ``limit`` newest entries, whole."""
    items = tuple(entries_newest_first[: max(limit, 0)])
    rest = entries_newest_first[len(items) :]
    return Kept(items, len(rest), 0)


def newest_within(entries_newest_first: Sequence[T], cap: int, size: Callable[[T], int]) -> Kept[T]:
    """Memory: the newest entries whose sizes sum to at most ``cap``."""
    total = 0
    items: list[T] = []
    for entry in entries_newest_first:
        if total + size(entry) > cap:
            break
        items.append(entry)
        total += size(entry)
    rest = entries_newest_first[len(items) :]
    return Kept(tuple(items), len(rest), sum(size(e) for e in rest))
