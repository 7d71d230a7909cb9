"""build-context: from the merged context document to what the agent and the humans read.

Pure: ``build`` turns a ``ContextDocument``, the settings and the history and
memory entries into the task, the context, the diff and the sizes kept and
left out: items (``items``) measured (``sizes``) in sections under their
budgets (``sections``). ``log_body.log_issue_body`` fits it into the log
issue. The I/O (reading state, claiming the log issue, writing files) is in
``main.py``. In the log issue, text from GitHub is quoted by
``tusk.text.render.quote_block``, which makes it inert.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from tusk.contracts.config import Settings
from tusk.contracts.models import ContextDocument, Trigger
from tusk.contracts.raw_context import RawContext
from tusk.github.trust import shown
from tusk.issues.run_facts import describe_permissions
from tusk.steps.build_context.items import (
    Entry,
    ItemFactory,
    entry_views,
    fmt_time,
    is_node,
    safe_url,
    trust_of,
)
from tusk.steps.build_context.sections import (
    conversation_section,
    linked_issues,
    review_comment_section,
    review_section,
)
from tusk.steps.build_context.selection import latest_entries, newest_within, review_scope
from tusk.steps.build_context.sizes import view_size
from tusk.steps.build_context.views import (
    ContextView,
    EntryView,
    ItemView,
    SectionView,
    Sizes,
    SummaryView,
    TaskView,
    ThreadView,
)
from tusk.text.neutralise import neutralise
from tusk.text.render import render

CONTEXT_FILE = "context.md"
DIFF_FILE = "diff.patch"


def log_issue_title(repo: str, number: int | None, moment: datetime) -> str:
    """``[Agent Log] owner/name #123 — YYYY-MM-DD HH:MM`` in UTC."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    where = f"{repo} #{number}" if number is not None else repo
    return f"[Agent Log] {where} — {moment.strftime('%Y-%m-%d %H:%M')}"


@dataclass(frozen=True)
class Built:
    task: TaskView
    context: ContextView
    diff: str | None
    sizes: Sizes


def thread_kind(raw: RawContext) -> str:
    named = {"issue": "issue", "pull_request": "pull request", "discussion": "discussion"}
    return named[raw.kind]


def trigger_review(trigger: Trigger, raw: RawContext) -> int | None:
    """The review a mention is inside (a review, or a comment of one), else None.

    Taken from the trigger when it says, else found in the raw context, so a
    review comment whose trigger lacks ``review_id`` still keeps its own batch.
    """
    if trigger.type == "review":
        if trigger.id.isdigit():
            return int(trigger.id)
        found = next((r.id for r in raw.reviews if is_node(r, trigger.id)), None)
        return int(found) if found is not None and str(found).isdigit() else trigger.review_id
    if trigger.type == "review_comment":
        if trigger.review_id is not None:
            return trigger.review_id
        return next(
            (c.pull_request_review_id for c in raw.review_comments if is_node(c, trigger.id)), None
        )
    return None


def build(
    doc: ContextDocument,
    settings: Settings,
    *,
    history: Sequence[Entry] = (),
    memory: Sequence[Entry] = (),
) -> Built:
    """Everything the run needs, filtered by A3. ``history``/``memory`` newest first."""
    raw = doc.raw
    trigger = doc.trigger
    make = ItemFactory(trust_of(settings, raw), trigger.created_at)
    kind = thread_kind(raw)
    budget = settings.limits.context_chars
    description = _description(make, raw, trigger)
    spent = view_size(description)
    sizes = Sizes(budget=budget)
    reviews = review_comments = None
    if kind == "pull request":
        reviews, review_comments, review_sizes = _review_sections(make, raw, trigger)
        spent += _items_size(reviews) + _items_size(review_comments)
        sizes = sizes.model_copy(update=review_sizes)
    # The conversation: the trigger whole, the rest by the 3:1 rule under what is left.
    conversation, conversation_sizes = conversation_section(
        make, raw.comments, trigger, budget - spent
    )
    linked, linked_note, linked_sizes = linked_issues(
        make, raw, settings.limits.linked_issue_chars, repo=doc.repo
    )
    state = _state_entries(history, memory, settings)
    diff = raw.diff if kind == "pull request" else None
    sizes = sizes.model_copy(
        update={**conversation_sizes, **linked_sizes, **state.sizes, "diff_chars": len(diff or "")}
    )
    thread = thread_view(doc, raw, make, kind)
    context = ContextView(
        thread=thread,
        trigger_url=safe_url(trigger.url) or "",
        trigger_kind=trigger.type.replace("_", " "),
        trigger_when=fmt_time(trigger.created_at),
        trigger_author=trigger.author,
        description=description,
        conversation=conversation,
        reviews=reviews,
        review_comments=review_comments,
        diff_file=DIFF_FILE if diff is not None else None,
        linked=linked,
        linked_note=linked_note,
        history=state.history,
        history_note=state.history_note,
        memory=state.memory,
        memory_note=state.memory_note,
        sizes=sizes,
    )
    task = task_view(doc, kind, thread.number, has_diff=diff is not None)
    return Built(task=task, context=context, diff=diff, sizes=sizes)


def _description(make: ItemFactory, raw: RawContext, trigger: Trigger) -> ItemView:
    """The thread's description: always whole. When it is the trigger, the frozen
    trigger text is shown."""
    is_trigger = trigger.type in ("issue_body", "pull_request_body", "discussion_body")
    return make.item(
        raw.thread, "description", is_trigger=is_trigger, body=trigger.body if is_trigger else None
    )


def _review_sections(
    make: ItemFactory, raw: RawContext, trigger: Trigger
) -> tuple[SectionView, SectionView, dict[str, int]]:
    """A pull request's reviews and review comments, by rule (``review_scope``)."""
    batch_hint = trigger_review(trigger, raw)
    scope = review_scope(raw.reviews, raw.review_comments, trigger_review_id=batch_hint)
    reviews = review_section(make, raw.reviews, scope.reviews, trigger, scope.rule)
    comments = review_comment_section(
        make, raw.review_comments, scope.review_comments, trigger, scope.batch_id
    )
    counts = {
        "reviews_kept": len(scope.reviews),
        "reviews_left_out": len(raw.reviews) - len(scope.reviews),
        "review_comments_kept": len(scope.review_comments),
        "review_comments_left_out": len(raw.review_comments) - len(scope.review_comments),
    }
    return reviews, comments, counts


def _items_size(section: SectionView) -> int:
    return sum(view_size(e) for e in section.entries if isinstance(e, ItemView))


@dataclass(frozen=True)
class StateEntries:
    """The history and memory entries that fit, and what the context says about them."""

    history: tuple[EntryView, ...]
    history_note: str
    memory: tuple[EntryView, ...]
    memory_note: str
    sizes: dict[str, int]


def _state_entries(
    history: Sequence[Entry], memory: Sequence[Entry], settings: Settings
) -> StateEntries:
    limits = settings.limits
    kept_history = latest_entries(list(history), limits.history_entries)
    kept_memory = newest_within(list(memory), limits.memory_total_chars, lambda e: len(e.text))
    left = kept_memory.left_out
    return StateEntries(
        history=entry_views(kept_history.items),
        history_note=(
            f"The latest {len(kept_history.items)} of the agent's run summaries, newest first."
            if kept_history.items
            else "No earlier runs are recorded."
        ),
        memory=entry_views(kept_memory.items),
        memory_note=(
            f"{left} older entr{'y' if left == 1 else 'ies'} left out "
            f"({kept_memory.left_out_chars} characters) to stay within "
            f"{limits.memory_total_chars} characters."
            if left
            else ""
        ),
        sizes={
            "history_kept": len(kept_history.items),
            "memory_kept": len(kept_memory.items),
            "memory_left_out": left,
        },
    )


def thread_view(doc: ContextDocument, raw: RawContext, make: ItemFactory, kind: str) -> ThreadView:
    """The thread's facts; one-line fields pass ``make.text`` (a line break could forge
    a heading)."""
    thread, trigger = raw.thread, doc.trigger
    return ThreadView(
        repo=doc.repo,
        kind=kind,
        number=thread.number if thread.number is not None else trigger.number,
        title=make.text(thread.title),
        url=safe_url(thread.html_url),
        state=thread.state,
        labels=tuple(make.text(label.name) for label in thread.labels),
        assignees=tuple(a.login for a in thread.assignees),
        milestone=make.text(thread.milestone.title) if thread.milestone else None,
        head=make.text(thread.head.ref) if thread.head else None,
        base=make.text(thread.base.ref) if thread.base else None,
        merged=thread.merged,
        draft=thread.draft,
    )


def task_view(doc: ContextDocument, kind: str, number: int | None, *, has_diff: bool) -> TaskView:
    """The task: the trigger's text, neutralised, and what the requester may have done."""
    trigger = doc.trigger
    cleaned = neutralise(trigger.body)
    permissions = doc.permission_config
    return TaskView(
        repo=doc.repo,
        thread_kind=kind,
        number=number,
        trigger_url=safe_url(trigger.url) or "",
        trigger_kind=trigger.type.replace("_", " "),
        author=trigger.author,
        trust_level=shown(doc.trust_level, doc.trust_source),
        when=fmt_time(trigger.created_at),
        text=cleaned.text,
        flags=cleaned.content_flags,
        permissions=describe_permissions(permissions),
        marker_error=neutralise(permissions.error).text if permissions.error else None,
        context_file=CONTEXT_FILE,
        diff_file=DIFF_FILE if has_diff else None,
    )


def render_task(task: TaskView) -> str:
    return render("task.md.j2", task=task)


def render_context(context: ContextView) -> str:
    return render("context.md.j2", context=context)


def render_summary(summary: SummaryView) -> str:
    return render("step_summary.md.j2", summary=summary)


def task_excerpt(text: str, limit: int = 1000) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    return text[:limit].rsplit("\n", 1)[0] if "\n" in text[:limit] else text[:limit], True
