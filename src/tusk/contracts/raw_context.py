"""``ContextDocument.raw``: the thread the poller fetched, in the shape of GitHub's REST API.

One model for the whole product: the poller builds it (``tusk.poller.raw_shape``
from its GraphQL pages), build-context, the MCP server's read scope and the
server read it. It is our contract, not a GitHub payload, so it refuses
unknown fields like every contract, and it has one spelling: REST's field names
(snake_case; ``user`` is ``{login, type}``, labels ``[{name}]``), laid out so::

    kind              "issue" | "pull_request" | "discussion"
    repository        full_name, description, private, default_branch, html_url, ...,
                      branches [{name, sha, committed_at, message}],
                      protection {branch, visible, protected, rules, note} of the
                      default branch (read only where the bot is an admin)
    thread            number, title, body, user, state, state_reason, html_url,
                      node_id, created_at, updated_at, last_edited_at, closed_at, labels;
                      issues/PRs: assignees [{login}], milestone {number, title, due_on};
                      PRs: draft, merged, merged_at, mergeable, head/base {ref, sha, repo};
                      discussions: category, answered
    comments          [{id, node_id, user, author_association, body, created_at,
                      updated_at, html_url, viewer_reactions}] (author_association marks
                      trusted text only; ``viewer_reactions``, also on the thread and
                      reviews: the contents the bot reacted with, e.g. ["eyes"])
                      oldest first; discussion replies are in it with ``in_reply_to_id``
    reviews           PRs: [{id, node_id, user, state, body, submitted_at, html_url}]
    review_comments   PRs: [{id, node_id, pull_request_review_id, user, body, path,
                      line, diff_hunk, in_reply_to_id, created_at, updated_at, html_url}]
    linked_issues     PRs: [{repo, issue {...thread fields}, comments [...]}]
    diff              PRs: the full diff text; otherwise null
    bot               login, repositories [{full_name, description, private, fork,
                      parent, default_branch, pushed_at, updated_at, stars}],
                      fork {full_name, ..., branches [...]} | null
    notes             what was not visible (e.g. protection rules without admin)
    collaborators     the logins with write access, when known (null: unknown)

``rules`` is GitHub's branch-protection answer as GitHub gave it. Its JSON
Schema is exported with the context document's (``tusk.contracts.schemas``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final, Literal

from pydantic import Field

from tusk.contracts.base import StrictModel

RAW_CONTEXT_VERSION: Final = 1
ThreadKind = Literal["issue", "pull_request", "discussion"]
GHOST = "ghost"  # deleted accounts come back as null; GitHub shows them as "ghost"


class Actor(StrictModel):
    """REST's ``user``: the login and whether it is an app's account ("Bot")."""

    login: str
    type: Literal["User", "Bot"] = "User"


class Authored(StrictModel):
    """What every piece of text in a thread has: an author, a body and where it is."""

    node_id: str | None = None
    user: Actor | None = Field(default=None, description="null for a deleted account")
    author_association: str | None = Field(
        default=None, description="GitHub's OWNER, COLLABORATOR, NONE, ...: marks trusted text"
    )
    body: str = ""
    updated_at: datetime | None = None
    html_url: str | None = None
    viewer_reactions: tuple[str, ...] = Field(
        default=(), description='the reactions the bot left on it, in REST\'s spelling ("eyes")'
    )

    @property
    def author(self) -> str:
        return self.user.login if self.user else GHOST


class Comment(Authored):
    id: int | None = None
    created_at: datetime | None = None
    in_reply_to_id: int | None = Field(
        default=None, description="discussion replies: the comment answered"
    )


class ReviewComment(Comment):
    pull_request_review_id: int | None = None
    path: str | None = None
    line: int | None = None
    diff_hunk: str | None = None


class Review(Authored):
    id: int | None = None
    state: str | None = None
    submitted_at: datetime | None = None

    @property
    def created_at(self) -> datetime | None:
        return self.submitted_at


class Label(StrictModel):
    name: str


class Assignee(StrictModel):
    login: str


class Milestone(StrictModel):
    number: int | None = None
    title: str | None = None
    due_on: datetime | None = None


class BranchRef(StrictModel):
    """A pull request's head or base."""

    ref: str | None = None
    sha: str | None = None
    repo: str | None = None


class Thread(Authored):
    """The issue, pull request or discussion the trigger is in (a linked issue too)."""

    number: int | None = None
    title: str | None = None
    state: str | None = None
    state_reason: str | None = None
    created_at: datetime | None = None
    last_edited_at: datetime | None = Field(
        default=None, description="the body's own edit time: updated_at moves with every comment"
    )
    closed_at: datetime | None = None
    labels: tuple[Label, ...] = ()
    # issues and pull requests
    assignees: tuple[Assignee, ...] = ()
    milestone: Milestone | None = None
    # pull requests
    draft: bool | None = None
    merged: bool | None = None
    merged_at: datetime | None = None
    mergeable: str | None = None
    head: BranchRef | None = None
    base: BranchRef | None = None
    # discussions
    answered: bool | None = None
    category: str | None = None


class LinkedIssue(StrictModel):
    """An issue a pull request closes, with its own conversation."""

    repo: str | None = None
    issue: Thread
    comments: tuple[Comment, ...] = ()


class Branch(StrictModel):
    name: str | None = None
    sha: str | None = None
    committed_at: datetime | None = None
    message: str | None = None


class Protection(StrictModel):
    """The default branch's protection, or why it is not visible (only admins may read it)."""

    branch: str | None = None
    visible: bool = False
    protected: bool | None = None
    rules: dict[str, Any] | None = Field(default=None, description="GitHub's answer, as given")
    note: str = ""


class RepoMeta(StrictModel):
    full_name: str | None = None
    description: str | None = None
    private: bool | None = None
    fork: bool | None = None
    parent: str | None = Field(default=None, description="a fork's upstream, owner/name")
    default_branch: str | None = None
    html_url: str | None = None
    pushed_at: datetime | None = None
    updated_at: datetime | None = None
    stars: int | None = None


class Repository(RepoMeta):
    branches: tuple[Branch, ...] = ()
    protection: Protection | None = None


class Fork(RepoMeta):
    branches: tuple[Branch, ...] = ()


class Bot(StrictModel):
    login: str | None = None
    repositories: tuple[RepoMeta, ...] = ()
    fork: Fork | None = Field(default=None, description="the bot's fork of the repository")


class RawContext(StrictModel):
    """The full raw context of one trigger's thread (MISSION P6), versioned."""

    version: Literal[1] = RAW_CONTEXT_VERSION
    kind: ThreadKind
    repository: Repository = Field(default_factory=Repository)
    thread: Thread
    comments: tuple[Comment, ...] = ()
    reviews: tuple[Review, ...] = ()
    review_comments: tuple[ReviewComment, ...] = ()
    linked_issues: tuple[LinkedIssue, ...] = ()
    diff: str | None = None
    bot: Bot = Field(default_factory=Bot)
    notes: tuple[str, ...] = ()
    collaborators: tuple[str, ...] | None = Field(
        default=None, description="logins with write access to the repository; null: unknown"
    )
