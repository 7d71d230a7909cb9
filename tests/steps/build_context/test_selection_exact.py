"""The 3:1 choice is the same however cheaply it is reached.

build-context passes over a comment whose size bound is over what is left,
without building it. These properties hold the faster walk to the results of
the walk that measured every comment it visited (the implementation before
the bounds, kept here as the reference), on many generated inputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.steps.build_context.bc_samples import REPO
from tusk.contracts.raw_context import Comment
from tusk.steps.build_context.items import ItemFactory
from tusk.steps.build_context.sections import choose_comments
from tusk.steps.build_context.selection import gaps, pick_by_ratio, visit_order
from tusk.steps.build_context.sizes import comment_floor, text_floor, text_floors, view_size
from tusk.text.neutralise import Trust

# --------------------------------------------------------------------------- reference


def reference_visit_order(count: int, newest_per_oldest: int = 3) -> list[int]:
    order: list[int] = []
    low, high, step = 0, count - 1, 0
    while low <= high:
        if step % (newest_per_oldest + 1) < newest_per_oldest:
            order.append(high)
            high -= 1
        else:
            order.append(low)
            low += 1
        step += 1
    return order


def reference_pick(sizes: Sequence[int], budget: int, floor: int = 0) -> tuple[int, ...]:
    """The walk before size bounds: every visited comment is measured."""
    remaining = max(budget, 0)
    kept: set[int] = set()
    for index in reference_visit_order(len(sizes)):
        if remaining < floor or remaining == 0:
            break
        size = sizes[index]
        if size <= remaining:
            kept.add(index)
            remaining -= size
    return tuple(sorted(kept))


def reference_gaps(kept_indices: Sequence[int], count: int) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    kept = set(kept_indices)
    index = 0
    while index < count:
        if index in kept:
            index += 1
            continue
        start = index
        while index < count and index not in kept:
            index += 1
        runs.append((start, index - start))
    return runs


class Counting(Sequence[int]):
    """Sizes that count how many are measured."""

    def __init__(self, sizes: Sequence[int]) -> None:
        self.sizes = sizes
        self.measured: set[int] = set()

    def __len__(self) -> int:
        return len(self.sizes)

    def __getitem__(self, index: int) -> int:  # type: ignore[override]
        self.measured.add(index)
        return self.sizes[index]


# --------------------------------------------------------------------------- pure walk


@given(st.integers(0, 400), st.integers(0, 6))
def test_visit_order_is_the_stepwise_walk(count: int, newest_per_oldest: int) -> None:
    assert visit_order(count, newest_per_oldest) == reference_visit_order(count, newest_per_oldest)


@given(st.integers(0, 300).flatmap(lambda n: st.tuples(st.just(n), st.sets(st.integers(0, n)))))
def test_gaps_are_the_runs_between_kept_indices(case: tuple[int, set[int]]) -> None:
    count, kept = case
    assert gaps(sorted(kept), count) == reference_gaps(sorted(kept), count)


sizes_and_slack = st.lists(
    st.tuples(st.integers(1, 3000), st.integers(0, 3000), st.integers(0, 3000)), max_size=300
)


@settings(max_examples=300, deadline=None)
@given(sizes_and_slack, st.integers(-100, 40_000))
def test_bounds_never_change_the_choice(items: list[tuple[int, int, int]], budget: int) -> None:
    sizes = [size for size, _, _ in items]
    # Two bounds, the first looser: each at most the size.
    loose = [max(size - a - b, 0) for size, a, b in items]
    tight = [max(size - a, 0) for size, a, _ in items]
    floor = min(loose, default=0)
    counted = Counting(sizes)
    selection = pick_by_ratio(counted, budget, floor=floor, rough=sizes, bounds=(loose, tight))
    assert selection.kept == reference_pick(sizes, budget)
    assert selection.kept_chars == sum(sizes[i] for i in selection.kept)
    assert selection.left_out == tuple(i for i in range(len(sizes)) if i not in selection.kept)
    # A comment is measured only when its bounds let it fit what was left then.
    assert set(selection.kept) <= counted.measured
    assert all(tight[i] <= budget for i in counted.measured)


def test_a_comment_that_cannot_fit_is_never_measured() -> None:
    sizes = [500] * 1000
    counted = Counting(sizes)
    selection = pick_by_ratio(counted, 2_100, rough=sizes, bounds=(sizes,))
    assert len(selection.kept) == 4
    assert counted.measured == set(selection.kept)


# --------------------------------------------------------------------------- real comments

T0 = datetime(2026, 11, 30, 6, 0, tzinfo=UTC)
# Characters that change a text's size when sanitised: carriage returns, hidden
# and bidi characters, tag characters, controls, and the pieces of HTML comments.
tricky_text = st.lists(
    st.sampled_from(
        [
            *("a", "b", " ", "\n", "\r", "<", "!", "-", ">", "<!--", "-->", "\u200b"),
            *("\u202e", "\U000e0041", "\x00", "\x7f", "é", "\t", "@", "#", "`", "word " * 30),
        ]
    ),
    max_size=40,
).map("".join)
logins = st.sampled_from(["alice", "bob", "mallory", "", "ghost", "Alice", "tusk-bot"])
urls = st.sampled_from(
    [
        f"https://github.com/{REPO}/issues/7#issuecomment-1",
        "javascript:alert(1)",
        "https://example.com/a b",
        "",
        "http://x",
    ]
)
times = st.sampled_from([None, "", "2026-11-30T06:00:00Z", "2026-11-30T12:00:00+02:00"])
associations = st.sampled_from([None, "OWNER", "NONE", "COLLABORATOR", "member", 7])


@st.composite
def raw_comment(draw: st.DrawFn, index: int = 0) -> dict[str, Any]:
    """A comment as the poller lays it out (``RawContext``), with odd values."""
    item: dict[str, Any] = {"id": index}
    if draw(st.booleans()):
        item["user"] = draw(st.one_of(st.none(), st.fixed_dictionaries({"login": logins})))
    body = draw(st.one_of(st.none(), tricky_text))
    if body is not None:
        item["body"] = body
    if draw(st.booleans()):
        item["html_url"] = draw(st.one_of(st.none(), urls))
    created = draw(times)
    if created is not None:
        item["created_at"] = created or None
    updated = draw(times)
    if updated:
        item["updated_at"] = updated
    association = draw(associations)
    if association is not None and not isinstance(association, int):
        item["author_association"] = association
    return item


def comments_of(items: Sequence[dict[str, Any]]) -> tuple[Comment, ...]:
    return tuple(Comment.model_validate(item) for item in items)


collaborators = st.one_of(st.none(), st.just(frozenset({"bob"})))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw_comment(), collaborators)
def test_a_comments_floor_is_never_over_its_size(
    item: dict[str, Any], collaborators: frozenset[str] | None
) -> None:
    comments = comments_of([item])
    trust = Trust(frozenset({"alice", "tusk-bot"}), collaborators)
    make = ItemFactory(trust, T0)
    size = view_size(make.item(comments[0], "comment"))
    body = comments[0].body
    cheap = text_floors([body])[0]
    assert cheap <= text_floor(body) <= text_floor(body, exact_html=True)
    assert comment_floor(comments, 0, trust) <= size


@st.composite
def thread(draw: st.DrawFn) -> list[dict[str, Any]]:
    count = draw(st.integers(0, 40))
    out = []
    for index in range(count):
        item = draw(raw_comment(index))
        # Mostly ordinary comments of varied length, some tricky ones.
        if draw(st.integers(0, 3)):
            item["body"] = "word " * draw(st.integers(0, 400))
        out.append(item)
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(thread(), st.integers(0, 20_000), st.one_of(st.none(), st.integers(0, 39)))
def test_choose_comments_keeps_what_measuring_every_comment_kept(
    items: list[dict[str, Any]], budget: int, skip: int | None
) -> None:
    trust = Trust(frozenset({"alice"}), None)
    make = ItemFactory(trust, T0)
    comments = comments_of(items)
    if skip is not None and skip >= len(items):
        skip = None
    chosen = choose_comments(comments, budget, make=make, skip=skip)
    others = [i for i in range(len(items)) if i != skip]
    measured = [view_size(make.item(comments[i], "comment")) for i in others]
    # The old walk stopped below 40 characters, the least an item could cost.
    expected = [others[i] for i in reference_pick(measured, budget, floor=40)]
    assert chosen.kept == expected
    assert sorted(chosen.items) == expected
    for index in expected:
        assert chosen.items[index] == make.item(comments[index], "comment")


class CountingFactory(ItemFactory):
    built = 0

    def item(self, node: Any, kind: str, **kwargs: Any) -> Any:
        CountingFactory.built += 1
        return super().item(node, kind, **kwargs)


def test_a_long_thread_builds_only_the_comments_that_may_fit() -> None:
    items = [
        {
            "id": i,
            "user": {"login": "bob"},
            "body": "x" * (300 + i % 50),
            "created_at": "2026-11-30T06:00:00Z",
            "html_url": f"https://github.com/{REPO}/issues/7#issuecomment-{i}",
        }
        for i in range(5000)
    ]
    CountingFactory.built = 0
    make = CountingFactory(Trust(frozenset({"alice"}), None), T0)
    chosen = choose_comments(comments_of(items), 10_000, make=make)
    assert 10 < len(chosen.kept) < 40
    # Each kept comment is built once; those the bounds could not rule out, a few more.
    assert CountingFactory.built < 2 * len(chosen.kept)
