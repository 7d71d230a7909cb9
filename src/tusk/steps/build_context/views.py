"""The typed models the context, task and summary templates are fed."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class View(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ItemView(View):
    """One piece of text from GitHub: a body, comment, review or review comment."""

    kind: str  # "comment", "review", "review comment", "description"
    author: str
    url: str | None
    when: str  # "2026-11-30 06:31 UTC"
    detail: str = ""  # "APPROVED", "src/app.py line 12", ...
    flags: tuple[
        str, ...
    ] = ()  # untrusted author, written/edited after the mention, hidden content
    text: str
    is_trigger: bool = False


class GapView(View):
    """A run of left-out items, said in place."""

    gap: Literal[True] = True
    count: int
    chars: int


class SectionView(View):
    title: str
    note: str = ""
    entries: tuple[ItemView | GapView, ...] = ()


class LinkedIssueView(View):
    title: str
    url: str | None
    note: str
    entries: tuple[ItemView | GapView, ...] = ()


class EntryView(View):
    text: str
    when: str
    url: str | None = None


class Sizes(View):
    """What was kept and left out, for the context's last section and the step summary."""

    comments_kept: int = 0
    comments_left_out: int = 0
    comment_chars_kept: int = 0
    comment_chars_left_out: int = 0
    reviews_kept: int = 0
    reviews_left_out: int = 0
    review_comments_kept: int = 0
    review_comments_left_out: int = 0
    linked_kept: int = 0
    linked_left_out: int = 0
    linked_chars_left_out: int = 0
    history_kept: int = 0
    memory_kept: int = 0
    memory_left_out: int = 0
    diff_chars: int = 0
    context_chars: int = 0
    budget: int = 0

    @property
    def anything_left_out(self) -> bool:
        return bool(
            self.comments_left_out
            or self.reviews_left_out
            or self.review_comments_left_out
            or self.linked_left_out
            or self.memory_left_out
        )


class ThreadView(View):
    repo: str
    kind: str  # "issue", "pull request", "discussion"
    number: int | None
    title: str
    url: str | None
    state: str | None
    labels: tuple[str, ...] = ()
    assignees: tuple[str, ...] = ()
    milestone: str | None = None
    head: str | None = None
    base: str | None = None
    merged: bool | None = None
    draft: bool | None = None


class ContextView(View):
    thread: ThreadView
    trigger_url: str
    trigger_kind: str
    trigger_when: str
    trigger_author: str
    description: ItemView | None
    conversation: SectionView
    reviews: SectionView | None
    review_comments: SectionView | None
    diff_file: str | None
    linked: tuple[LinkedIssueView, ...]
    linked_note: str
    history: tuple[EntryView, ...]
    history_note: str
    memory: tuple[EntryView, ...]
    memory_note: str
    sizes: Sizes


class TaskView(View):
    repo: str
    thread_kind: str
    number: int | None
    trigger_url: str
    trigger_kind: str
    author: str
    trust_level: str
    when: str
    text: str
    flags: tuple[str, ...] = ()
    permissions: tuple[str, ...]
    marker_error: str | None
    context_file: str
    diff_file: str | None


class SummaryView(View):
    jobid: str
    task_excerpt: str
    task_cut: bool
    trigger_url: str
    log_issue_url: str | None
    log_issue_number: int | None
    won: bool
    # Why the run stops although no log issue owns the job (it ran already).
    stopped_why: str = ""
    sizes: Sizes
    log_body_chars: int
    log_context_cut: bool
    artifact_name: str | None
