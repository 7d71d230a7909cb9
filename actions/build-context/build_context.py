"""build-context: from the merged context document to what the agent and the humans read.

Pure: ``build`` turns a ``ContextDocument``, the settings and the history and
memory entries into the task, the context, the diff and the sizes kept and
left out.
``log_body.log_issue_body`` fits it into the log issue.
The I/O (reading state, claiming the log issue, writing files) is in
``main.py``. Text from GitHub is neutralised here by ``tusk.neutralise`` (the
same function the MCP server's read tools use); in the log issue it is quoted
by ``tusk.render.quote_block``, which makes it inert.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Protocol

from tusk.actions.build_context.raw import (
    LazyNodes,
    Node,
    RawContext,
    Review,
    ReviewComment,
    Thread,
    parse_raw,
)
from tusk.actions.build_context.selection import (
    Selection,
    gaps,
    latest_entries,
    newest_within,
    pick_by_ratio,
    review_scope,
)
from tusk.actions.build_context.views import (
    ContextView,
    EntryView,
    GapView,
    ItemView,
    LinkedIssueView,
    SectionView,
    Sizes,
    SummaryView,
    TaskView,
    ThreadView,
)

from tusk.config import Settings
from tusk.contracts import ContextDocument, Trigger
from tusk.neutralise import UNTRUSTED_FLAG, Trust, neutralise, one_line
from tusk.render import render
from tusk.run_facts import describe_permissions

# A rough cost of one item's heading on top of its text, for counting what is left out.
ITEM_OVERHEAD = 160
CONTEXT_FILE = "context.md"
DIFF_FILE = "diff.patch"


def fmt_time(moment: datetime | None) -> str:
    if moment is None:
        return "unknown time"
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def log_issue_title(repo: str, number: int | None, moment: datetime) -> str:
    """``[Agent Log] owner/name #123 — YYYY-MM-DD HH:MM`` in UTC."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    where = f"{repo} #{number}" if number is not None else repo
    return f"[Agent Log] {where} — {moment.strftime('%Y-%m-%d %H:%M')}"


_SAFE_URL = re.compile(r"^https?://[^\s()<>\"'`\\]+$")


def safe_url(url: str | None) -> str | None:
    """A URL fit to put inside a markdown link, or None."""
    return url if url and _SAFE_URL.match(url) else None


# --------------------------------------------------------------------------- items


def trust_of(settings: Settings, raw: RawContext) -> Trust:
    return Trust.of((*settings.allowed_users, settings.bot), raw.collaborators)


def time_flags(node: Node, trigger_time: datetime) -> tuple[str, ...]:
    """Mark text written or edited after the mention: the requester never saw it.

    An issue's or pull request's ``updated_at`` moves with every comment,
    label, push or review, so for a thread only ``last_edited_at`` tells an
    edit of its text; a comment's ``updated_at`` moves only when it is edited.
    """
    if node.created_at is not None and node.created_at > trigger_time:
        return ("written after the mention",)
    edited = (
        node.last_edited_at if isinstance(node, Thread) else node.last_edited_at or node.updated_at
    )
    if edited is not None and edited > trigger_time:
        return ("edited after the mention",)
    return ()


@dataclass(frozen=True)
class ItemFactory:
    trust: Trust
    trigger_time: datetime

    def text(self, value: str | None) -> str:
        """A one-line field (title, label, branch): a line break in it could forge a heading."""
        return one_line(value)

    def item(
        self,
        node: Node,
        kind: str,
        *,
        detail: str = "",
        is_trigger: bool = False,
        body: str | None = None,
    ) -> ItemView:
        cleaned = neutralise(
            node.text if body is None else body,
            trusted=self.trust.trusted(node.author, node.author_association),
        )
        flags = [*cleaned.author_flags]
        if not is_trigger:
            flags.extend(time_flags(node, self.trigger_time))
        flags.extend(cleaned.content_flags)
        return ItemView(
            kind=kind,
            author=node.author,
            url=safe_url(node.html_url),
            when=fmt_time(node.created_at),
            detail=self.text(detail),
            flags=tuple(flags),
            text=cleaned.text,
            is_trigger=is_trigger,
        )


def item_size(text: str | None) -> int:
    """A cheap estimate: the raw text plus a heading. Used to count what is left out."""
    return len(text or "") + ITEM_OVERHEAD


def view_size(item: ItemView) -> int:
    """The characters ``item`` adds to context.md (the template's ``item`` macro): its
    heading, one line per flag, and its text with "> " before every line. The budget
    is spent in these, so many short lines or flagged authors cannot overrun it."""
    heading = _heading_size(item.kind, item.author, item.when, item.url)
    if item.detail:
        heading += len(item.detail) + 3
    if item.is_trigger:
        heading += 48
    return heading + _flags_size(item.flags) + _text_size(item.text)


def _heading_size(kind: str, author: str, when: str, url: str | None) -> int:
    return len(f"#### {kind} by @{author} · {when}") + 3 + (len(url) + 11 if url else 0)


def _flags_size(flags: Sequence[str]) -> int:
    return sum(len(flag) + 5 for flag in flags) + (1 if flags else 0)


def _text_size(text: str) -> int:
    text = text or "(empty)"
    return len(text) + 2 * (text.count("\n") + 1) + 2


# The shortest time ``fmt_time`` writes.
_SHORTEST_WHEN = "unknown time"
# What every comment's heading costs whoever wrote it, whatever its link.
_COMMENT_HEADING_FLOOR = _heading_size("comment", "", _SHORTEST_WHEN, None)


def text_floor(body: str, *, exact_html: bool = False) -> int:
    """A lower bound of ``_text_size`` of ``body`` once sanitised, without sanitising it.

    Sanitising drops carriage returns, lengthens every other hidden character and
    keeps every line break; only HTML comments remove text. A text that holds one
    (once its carriage returns are gone) counts nothing, unless ``exact_html``
    asks to sanitise it and measure.
    """
    if "\r" in body:
        body = body.replace("\r", "")
    if "<!--" in body:
        return _text_size(neutralise(body).text) if exact_html else 0
    return _text_size(body)


def text_floors(bodies: Sequence[str]) -> list[int]:
    """``text_floor`` of each body, looser and at a fraction of the cost: a text with
    neither a carriage return nor a "<" (no HTML comment then) costs at least its
    length plus one quoted line (``len + 4``); only the others take the slower road.
    Both tests are single-character scans, the fastest a string offers."""
    return [
        len(body) + 4 if "<" not in body and "\r" not in body else text_floor(body)
        for body in bodies
    ]


def comment_floor(comments: LazyNodes, index: int, trust: Trust) -> int:
    """A lower bound of ``view_size`` of comment ``index`` as an ordinary (not trigger)
    comment, read from its raw payload without validating it, so the 3:1 walk can
    pass over a comment that cannot fit without building it.

    Every part is one ``view_size`` counts, at its least: the author and link as
    the model will read them (else nothing), the shortest time, the untrusted flag
    when it is certain, and the text (``text_floor``).
    """
    actor = comments.first(index, "user", "author")
    login = actor.get("login") if isinstance(actor, dict) else None
    author = login if isinstance(login, str) else ""
    url = comments.first(index, "html_url", "url")
    link = safe_url(url) if isinstance(url, str) else None
    size = _heading_size("comment", author, _SHORTEST_WHEN, link)
    association = comments.first(index, "author_association", "authorAssociation")
    if author and not trust.trusted(author, association if isinstance(association, str) else None):
        size += _flags_size((UNTRUSTED_FLAG,))
    return size + text_floor(comments.bodies()[index], exact_html=True)


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


# --------------------------------------------------------------------------- history, memory


class Entry(Protocol):
    @property
    def text(self) -> str: ...

    @property
    def created_at(self) -> datetime: ...

    @property
    def url(self) -> str: ...


def entry_views(entries: Sequence[Entry]) -> tuple[EntryView, ...]:
    return tuple(
        EntryView(
            text=neutralise(e.text).text,
            when=fmt_time(e.created_at),
            url=safe_url(e.url),
        )
        for e in entries
    )


# --------------------------------------------------------------------------- the build


@dataclass(frozen=True)
class Built:
    task: TaskView
    context: ContextView
    diff: str | None
    sizes: Sizes


def thread_kind(doc: ContextDocument, raw: RawContext) -> str:
    named = {"issue": "issue", "pull_request": "pull request", "discussion": "discussion"}
    if raw.kind in named:
        return named[raw.kind]
    if doc.trigger.type.startswith("discussion"):
        return "discussion"
    thread = raw.thread
    is_pr = doc.trigger.type in ("pull_request_body", "review", "review_comment") or bool(
        thread and thread.head
    )
    return "pull request" if is_pr else "issue"


def _is(node: Node, trigger_id: str) -> bool:
    return trigger_id in {str(v) for v in (node.id, node.node_id) if v is not None}


def trigger_review(trigger: Trigger, raw: RawContext) -> int | None:
    """The review a mention is inside (a review, or a comment of one), else None.

    Taken from the trigger when it says, else found in the raw context, so a
    review comment whose trigger lacks ``review_id`` still keeps its own batch.
    """
    if trigger.type == "review":
        if trigger.id.isdigit():
            return int(trigger.id)
        found = next((r.id for r in raw.reviews if _is(r, trigger.id)), None)
        return int(found) if found is not None and str(found).isdigit() else trigger.review_id
    if trigger.type == "review_comment":
        if trigger.review_id is not None:
            return trigger.review_id
        return next(
            (c.pull_request_review_id for c in raw.review_comments if _is(c, trigger.id)), None
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
    raw = parse_raw(doc.raw)
    trigger = doc.trigger
    make = ItemFactory(trust_of(settings, raw), trigger.created_at)
    kind = thread_kind(doc, raw)
    thread = raw.thread
    budget = settings.limits.context_chars
    spent = 0

    # The description: always whole. When it is the trigger, the frozen trigger text is shown.
    description = None
    if thread is not None:
        is_trigger = trigger.type in ("issue_body", "pull_request_body", "discussion_body")
        description = make.item(
            thread,
            "description",
            is_trigger=is_trigger,
            body=trigger.body if is_trigger else None,
        )
        spent += view_size(description)

    # Reviews, by rule (PRs only).
    reviews_section = comments_section = None
    sizes = Sizes(budget=budget)
    if kind == "pull request":
        batch_hint = trigger_review(trigger, raw)
        scope = review_scope(raw.reviews, raw.review_comments, trigger_review_id=batch_hint)
        reviews_section = _review_section(make, raw.reviews, scope.reviews, trigger, scope.rule)
        comments_section = _review_comment_section(
            make, raw.review_comments, scope.review_comments, trigger, scope.batch_id
        )
        spent += sum(view_size(e) for e in reviews_section.entries if isinstance(e, ItemView))
        spent += sum(view_size(e) for e in comments_section.entries if isinstance(e, ItemView))
        sizes = sizes.model_copy(
            update={
                "reviews_kept": len(scope.reviews),
                "reviews_left_out": len(raw.reviews) - len(scope.reviews),
                "review_comments_kept": len(scope.review_comments),
                "review_comments_left_out": len(raw.review_comments) - len(scope.review_comments),
            }
        )

    # The conversation: the trigger whole, the rest by the 3:1 rule under what is left.
    conversation, conv_sizes = _conversation(make, raw.comments, trigger, budget - spent)
    sizes = sizes.model_copy(update=conv_sizes)

    linked, linked_note, linked_sizes = _linked(
        make, raw, settings.limits.linked_issue_chars, repo=doc.repo
    )
    sizes = sizes.model_copy(update=linked_sizes)

    kept_history = latest_entries(list(history), settings.limits.history_entries)
    kept_memory = newest_within(
        list(memory), settings.limits.memory_total_chars, lambda e: len(e.text)
    )
    history_note = (
        f"The latest {len(kept_history.items)} of the agent's run summaries, newest first."
        if kept_history.items
        else "No earlier runs are recorded."
    )
    memory_note = (
        f"{kept_memory.left_out} older entr{'y' if kept_memory.left_out == 1 else 'ies'} left "
        f"out ({kept_memory.left_out_chars} characters) to stay within "
        f"{settings.limits.memory_total_chars} characters."
        if kept_memory.left_out
        else ""
    )

    diff = raw.diff if kind == "pull request" else None
    sizes = sizes.model_copy(
        update={
            "history_kept": len(kept_history.items),
            "memory_kept": len(kept_memory.items),
            "memory_left_out": kept_memory.left_out,
            "diff_chars": len(diff or ""),
        }
    )

    thread_view = ThreadView(
        repo=doc.repo,
        kind=kind,
        number=thread.number if thread and thread.number is not None else trigger.number,
        title=make.text(thread.title if thread else ""),
        url=safe_url(thread.html_url if thread else None),
        state=thread.state if thread else None,
        labels=tuple(make.text(label.name) for label in (thread.labels if thread else ())),
        assignees=tuple(a.login for a in (thread.assignees if thread else ())),
        milestone=make.text(thread.milestone.title) if thread and thread.milestone else None,
        head=make.text(thread.head.label or thread.head.ref) if thread and thread.head else None,
        base=make.text(thread.base.ref) if thread and thread.base else None,
        merged=thread.merged if thread else None,
        draft=thread.draft if thread else None,
    )
    context = ContextView(
        thread=thread_view,
        trigger_url=safe_url(trigger.url) or "",
        trigger_kind=trigger.type.replace("_", " "),
        trigger_when=fmt_time(trigger.created_at),
        trigger_author=trigger.author,
        description=description,
        conversation=conversation,
        reviews=reviews_section,
        review_comments=comments_section,
        diff_file=DIFF_FILE if diff is not None else None,
        linked=linked,
        linked_note=linked_note,
        history=entry_views(kept_history.items),
        history_note=history_note,
        memory=entry_views(kept_memory.items),
        memory_note=memory_note,
        sizes=sizes,
    )
    trigger_clean = neutralise(trigger.body)
    task_flags = trigger_clean.content_flags
    permissions = doc.permission_config
    task = TaskView(
        repo=doc.repo,
        thread_kind=kind,
        number=thread_view.number,
        trigger_url=safe_url(trigger.url) or "",
        trigger_kind=trigger.type.replace("_", " "),
        author=trigger.author,
        trust_level=doc.trust_level,
        when=fmt_time(trigger.created_at),
        text=trigger_clean.text,
        flags=task_flags,
        permissions=describe_permissions(permissions),
        marker_error=neutralise(permissions.error).text if permissions.error else None,
        context_file=CONTEXT_FILE,
        diff_file=DIFF_FILE if diff is not None else None,
    )
    return Built(task=task, context=context, diff=diff, sizes=sizes)


class Measured(Sequence[int]):
    """Sizes of items in context.md, measured on first access (the 3:1 walk visits few)."""

    def __init__(self, count: int, size_of: Callable[[int], int]) -> None:
        self._count = count
        self._size_of = size_of
        self._cache: dict[int, int] = {}

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: int) -> int:  # type: ignore[override]
        if index not in self._cache:
            self._cache[index] = self._size_of(index)
        return self._cache[index]


@dataclass(frozen=True)
class Chosen:
    """The 3:1 choice over a list of comments."""

    kept: list[int]  # indices into the comments, in order
    selection: Selection  # over the comments but the skipped one
    rough: list[int]  # a cheap size of every comment, for counting what is left out
    items: dict[int, ItemView]  # the kept comments, built


def choose_comments(
    comments: LazyNodes, budget: int, *, make: ItemFactory, skip: int | None = None
) -> Chosen:
    """The 3:1 choice over ``comments``, leaving out index ``skip``.

    A comment is built (validated, sanitised, measured) only when two lower
    bounds of its size say it might fit: its text's, counted for all at once,
    then its heading's and flags' from its raw payload.
    """
    bodies = comments.bodies()
    rough = [len(body) + ITEM_OVERHEAD for body in bodies]
    others: Sequence[int] = range(len(comments))
    if skip is not None:
        others = [i for i in others if i != skip]
    floors = text_floors(bodies)
    cheap = [_COMMENT_HEADING_FLOOR + floors[i] for i in others]
    refined = Measured(len(others), lambda i: comment_floor(comments, others[i], make.trust))
    built: dict[int, ItemView] = {}

    def measure(i: int) -> int:
        built[others[i]] = make.item(comments[others[i]], "comment")
        return view_size(built[others[i]])

    selection = pick_by_ratio(
        Measured(len(others), measure),
        budget,
        floor=min(cheap, default=0),
        rough=[rough[i] for i in others],
        bounds=(cheap, refined),
    )
    kept = [others[i] for i in selection.kept]
    return Chosen(kept, selection, rough, {i: built[i] for i in kept})


def _conversation(
    make: ItemFactory, comments: LazyNodes, trigger: Trigger, budget: int
) -> tuple[SectionView, dict[str, int]]:
    trigger_index = None
    if trigger.type in ("issue_comment", "discussion_comment"):
        trigger_index = comments.index_of(trigger.id)
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


def _review_section(
    make: ItemFactory,
    reviews: Sequence[Review],
    kept: Sequence[int],
    trigger: Trigger,
    rule: str,
) -> SectionView:
    items: list[ItemView | GapView] = []
    for index in kept:
        review = reviews[index]
        is_trigger = trigger.type == "review" and _is(review, trigger.id)
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


def _review_comment_section(
    make: ItemFactory,
    comments: Sequence[ReviewComment],
    kept: Sequence[int],
    trigger: Trigger,
    batch: int | None,
) -> SectionView:
    items: list[ItemView | GapView] = []
    for index in kept:
        comment = comments[index]
        is_trigger = trigger.type == "review_comment" and _is(comment, trigger.id)
        where = comment.path or ""
        line = comment.line or comment.original_line
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


def _linked(
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
        title = maker.text(f"#{issue.number} {issue.title}" if issue.number else issue.title)
        description = maker.item(issue, "description")
        description_size = view_size(description)
        if description_size > remaining:
            left_count += 1
            left_chars += description_size + sum(
                item_size(linked.comments.body(i)) for i in range(len(linked.comments))
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


# --------------------------------------------------------------------------- rendering


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
