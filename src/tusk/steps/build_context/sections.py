"""build-context's sections: the conversation, the reviews and the linked issues, each
under its budget (A3). Which comments are kept is decided by ``selection`` (3:1,
newest first); here they are built, measured and put in order with the gaps
between them. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from tusk.contracts.models import Trigger
from tusk.contracts.raw_context import Comment, RawContext, Review, ReviewComment
from tusk.steps.build_context.items import ItemFactory, index_of, is_node, safe_url
from tusk.steps.build_context.selection import Selection, gaps, pick_by_ratio
from tusk.steps.build_context.sizes import (
    COMMENT_HEADING_FLOOR,
    ITEM_OVERHEAD,
    Measured,
    comment_floor,
    item_size,
    text_floors,
    view_size,
)
from tusk.steps.build_context.views import GapView, ItemView, LinkedIssueView, SectionView


def with_gaps(
    items: Sequence[ItemView], kept: Sequence[int], count: int, sizes: Sequence[int]
) -> tuple[ItemView | GapView, ...]:
    """Kept items in order, with a ``GapView`` for each run of left-out ones."""
    by_index = dict(zip(kept, items, strict=True))
    out: list[ItemView | GapView] = []
    runs = gaps(kept, count)
    run = 0
    index = 0
    while index < count:
        if run < len(runs) and runs[run][0] == index:
            length = runs[run][1]
            out.append(GapView(count=length, chars=sum(sizes[index : index + length])))
            index += length
            run += 1
        else:
            out.append(by_index[index])
            index += 1
    return tuple(out)


@dataclass(frozen=True)
class Chosen:
    """The 3:1 choice over a list of comments."""

    kept: list[int]  # indices into the comments, in order
    selection: Selection  # over the comments but the skipped one
    rough: list[int]  # a cheap size of every comment, for counting what is left out
    items: dict[int, ItemView]  # the kept comments, built


def choose_comments(
    comments: Sequence[Comment], budget: int, *, make: ItemFactory, skip: int | None = None
) -> Chosen:
    """The 3:1 choice over ``comments``, leaving out index ``skip``.

    A comment is built (sanitised, measured) only when two lower bounds of its
    size say it might fit: its text's, counted for all at once, then its
    heading's and flags'.
    """
    bodies = [comment.body for comment in comments]
    rough = [len(body) + ITEM_OVERHEAD for body in bodies]
    others: Sequence[int] = range(len(comments))

    def but_skipped(values: list[int]) -> list[int]:  # the values of ``others``, by slices
        return values if skip is None else values[:skip] + values[skip + 1 :]

    if skip is not None:
        others = [*range(skip), *range(skip + 1, len(comments))]
    cheap = [COMMENT_HEADING_FLOOR + floor for floor in but_skipped(text_floors(bodies))]
    refined = Measured(len(others), lambda i: comment_floor(comments, others[i], make.trust))
    built: dict[int, ItemView] = {}

    def measure(i: int) -> int:
        built[others[i]] = make.item(comments[others[i]], "comment")
        return view_size(built[others[i]])

    selection = pick_by_ratio(
        Measured(len(others), measure),
        budget,
        floor=min(cheap, default=0),
        rough=but_skipped(rough),
        bounds=(cheap, refined),
    )
    kept = [others[i] for i in selection.kept]
    return Chosen(kept, selection, rough, {i: built[i] for i in kept})


def conversation_section(
    make: ItemFactory, comments: Sequence[Comment], trigger: Trigger, budget: int
) -> tuple[SectionView, dict[str, int]]:
    trigger_index = None
    if trigger.type in ("issue_comment", "discussion_comment"):
        trigger_index = index_of(comments, trigger.id)
    trigger_size = (
        view_size(make.item(comments[trigger_index], "comment", is_trigger=True, body=trigger.body))
        if trigger_index is not None
        else 0
    )
    chosen = choose_comments(comments, budget - trigger_size, make=make, skip=trigger_index)
    selection, kept = chosen.selection, chosen.kept
    if trigger_index is not None:
        kept = sorted([*kept, trigger_index])
    items = [
        # The trigger is shown whole, with its text frozen at the mention.
        make.item(comments[i], "comment", is_trigger=True, body=trigger.body)
        if i == trigger_index
        else chosen.items[i]
        for i in kept
    ]
    entries = with_gaps(items, kept, len(comments), chosen.rough)
    total = len(comments) - (trigger_index is not None)
    note = (
        f"{len(selection.kept)} of {total} other comments kept, chosen newest to oldest "
        f"at 3:1; {len(selection.left_out)} left out ({selection.left_out_chars} characters)."
        if total
        else "No other comments."
    )
    counts = {
        "comments_kept": len(selection.kept),
        "comments_left_out": len(selection.left_out),
        "comment_chars_kept": selection.kept_chars,
        "comment_chars_left_out": selection.left_out_chars,
    }
    return SectionView(title="Conversation", note=note, entries=entries), counts


def review_section(
    make: ItemFactory,
    reviews: Sequence[Review],
    kept: Sequence[int],
    trigger: Trigger,
    rule: str,
) -> SectionView:
    items: list[ItemView | GapView] = []
    for index in kept:
        review = reviews[index]
        is_trigger = trigger.type == "review" and is_node(review, trigger.id)
        items.append(
            make.item(
                review,
                "review",
                detail=review.state or "",
                is_trigger=is_trigger,
                body=trigger.body if is_trigger else None,
            )
        )
    left_out = len(reviews) - len(kept)
    if rule == "trigger-review":
        note = "The review the mention is in, whole."
    else:
        note = "Every review on the pull request."
    if left_out:
        note += f" {left_out} other review(s) left out."
    return SectionView(title="Reviews", note=note, entries=tuple(items))


def review_comment_section(
    make: ItemFactory,
    comments: Sequence[ReviewComment],
    kept: Sequence[int],
    trigger: Trigger,
    batch: int | None,
) -> SectionView:
    items: list[ItemView | GapView] = []
    for index in kept:
        comment = comments[index]
        is_trigger = trigger.type == "review_comment" and is_node(comment, trigger.id)
        where = comment.path or ""
        line = comment.line
        if where and line:
            where += f" line {line}"
        items.append(
            make.item(
                comment,
                "review comment",
                detail=where,
                is_trigger=is_trigger,
                body=trigger.body if is_trigger else None,
            )
        )
    left_out = len(comments) - len(kept)
    note = (
        f"All {len(kept)} comment(s) of review {batch}, whole."
        if batch is not None
        else "No review comments."
    )
    if left_out:
        note += f" {left_out} review comment(s) of other reviews left out."
    return SectionView(title="Review comments", note=note, entries=tuple(items))


def linked_issues(
    make: ItemFactory, raw: RawContext, budget: int, *, repo: str
) -> tuple[tuple[LinkedIssueView, ...], str, dict[str, int]]:
    """Linked issues under their own budget: description first, then comments by 3:1.

    An issue in another repository (anyone may write "fixes them/their-repo#1")
    carries ``author_association`` of that repository: there only allowed
    users and the bot count as trusted.
    """
    remaining = budget
    views: list[LinkedIssueView] = []
    kept_count = left_count = left_chars = 0
    foreign = replace(make, trust=make.trust.strangers_only())
    for linked in raw.linked_issues:
        same_repo = (linked.repo or "").lower() == repo.lower()
        maker = make if same_repo else foreign
        issue = linked.issue
        title = maker.text(f"#{issue.number} {issue.title or ''}" if issue.number else issue.title)
        description = maker.item(issue, "description")
        description_size = view_size(description)
        if description_size > remaining:
            left_count += 1
            left_chars += description_size + sum(
                item_size(comment.body) for comment in linked.comments
            )
            views.append(
                LinkedIssueView(
                    title=title,
                    url=safe_url(issue.html_url),
                    note="Left out: its description alone is over what is left of the "
                    f"linked-issue budget ({description_size} > {remaining} characters).",
                )
            )
            continue
        remaining -= description_size
        kept_count += 1
        chosen = choose_comments(linked.comments, remaining, make=maker)
        kept = chosen.kept
        remaining -= chosen.selection.kept_chars
        left_chars += chosen.selection.left_out_chars
        items = [chosen.items[i] for i in kept]
        entries = (
            description,
            *with_gaps(items, kept, len(linked.comments), chosen.rough),
        )
        views.append(
            LinkedIssueView(
                title=title,
                url=safe_url(issue.html_url),
                note=f"{len(kept)} of {len(linked.comments)} comments kept.",
                entries=entries,
            )
        )
    note = (
        f"{len(raw.linked_issues)} linked issue(s) under a budget of {budget} characters."
        if raw.linked_issues
        else ""
    )
    counts = {
        "linked_kept": kept_count,
        "linked_left_out": left_count,
        "linked_chars_left_out": left_chars,
    }
    return tuple(views), note, counts
