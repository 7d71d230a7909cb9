"""The local GitHub's records: plain data classes for users, tokens, repositories,
issues and pull requests, comments, reviews, discussions, labels, artifacts,
notification threads and dispatches. Their behaviour is ``tusk.sandbox.world.World``'s."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

SubjectKind = Literal["Issue", "PullRequest", "Discussion"]


@dataclass
class User:
    login: str
    id: int
    type: str = "User"
    name: str | None = None
    email: str | None = None
    members: list[str] = field(default_factory=list)  # an Organization's members


@dataclass
class Token:
    name: str
    user: str
    scopes: list[str]
    read_only: bool = False
    # A workflow's GITHUB_TOKEN: an installation token for its own repository only,
    # with the job's `permissions:` (docs.github.com/en/actions/security-for-github-
    # actions/security-guides/automatic-token-authentication). None: a classic token.
    repository: str | None = None
    permissions: dict[str, str] = field(default_factory=dict)


@dataclass
class Reaction:
    id: int
    user: str
    content: str
    created_at: datetime


@dataclass
class Comment:
    id: int
    author: str
    body: str
    created_at: datetime
    updated_at: datetime
    reactions: list[Reaction] = field(default_factory=list)
    # Sandbox wall time from which comment listings show it (settings.
    # comment_listing_lag_seconds); None: at once. Its own URL serves it at once.
    listed_from: float | None = None


@dataclass
class ReviewComment:
    id: int
    review_id: int | None
    author: str
    body: str
    path: str
    line: int | None
    side: str
    created_at: datetime
    updated_at: datetime
    commit_id: str = ""
    in_reply_to: int | None = None
    reactions: list[Reaction] = field(default_factory=list)


@dataclass
class Review:
    id: int
    author: str
    body: str
    state: str
    submitted_at: datetime
    commit_id: str = ""
    reactions: list[Reaction] = field(default_factory=list)


@dataclass
class PullInfo:
    head_repo: str  # full name of the repository holding the head branch ("" once deleted)
    head_ref: str
    base_ref: str
    draft: bool = False
    merged: bool = False
    merged_at: datetime | None = None
    maintainer_can_modify: bool = False
    reviews: list[Review] = field(default_factory=list)
    review_comments: list[ReviewComment] = field(default_factory=list)


@dataclass
class Issue:
    number: int
    id: int
    author: str
    title: str
    body: str | None
    created_at: datetime
    updated_at: datetime
    state: str = "open"
    state_reason: str | None = None
    closed_at: datetime | None = None
    # Who closed it: REST ``closed_by`` (GitHub's "Get an issue" response).
    closed_by: str | None = None
    labels: list[str] = field(default_factory=list)
    assignees: list[str] = field(default_factory=list)
    milestone: str | None = None
    locked: bool = False
    # When the body itself was last edited: GraphQL ``lastEditedAt`` ("The moment the
    # editor made the last edit", GitHub's GraphQL reference, interface Comment).
    # ``updated_at`` moves with every comment and label; this only with the body.
    body_edited_at: datetime | None = None
    comments: list[Comment] = field(default_factory=list)
    reactions: list[Reaction] = field(default_factory=list)
    pull: PullInfo | None = None
    subscribers: set[str] = field(default_factory=set)
    # Sandbox wall time (World.wall) from which listings and search show the issue
    # (settings.listing_lag_seconds); None: at once. Its own URL serves it at once.
    listed_from: float | None = None


@dataclass
class DiscussionComment:
    id: int
    author: str
    body: str
    created_at: datetime
    updated_at: datetime
    replies: list[DiscussionComment] = field(default_factory=list)
    reply_to: int | None = None
    reactions: list[Reaction] = field(default_factory=list)


@dataclass
class Discussion:
    number: int
    id: int
    author: str
    title: str
    body: str
    category: str
    created_at: datetime
    updated_at: datetime
    closed: bool = False
    comments: list[DiscussionComment] = field(default_factory=list)
    reactions: list[Reaction] = field(default_factory=list)


@dataclass
class Label:
    id: int
    name: str
    color: str = "ededed"
    description: str | None = None
    # One of the labels GitHub gives every new repository ("bug", "duplicate", ...).
    default: bool = False


@dataclass
class Artifact:
    id: int
    name: str
    data: bytes
    created_at: datetime
    expires_at: datetime
    run_id: int
    head_branch: str


@dataclass
class Invitation:
    """A pending invitation to collaborate: the invitee has no access until they accept it
    ("the invitee will receive a notification that they have been invited ... [and] must
    accept": docs.github.com/rest/collaborators/collaborators#add-a-repository-collaborator)."""

    id: int
    invitee: str
    inviter: str
    permission: str  # as granted: read, triage, write, maintain, admin
    created_at: datetime


@dataclass
class Repo:
    owner: str
    name: str
    id: int
    created_at: datetime
    updated_at: datetime
    pushed_at: datetime
    private: bool = False
    default_branch: str = "main"
    description: str | None = None
    collaborators: dict[str, str] = field(default_factory=dict)
    contributors: list[str] = field(default_factory=list)  # logins with commits in it
    workflow_runs: list[Any] = field(default_factory=list)  # rest_runs.WorkflowRun
    attestations: list[dict[str, Any]] = field(default_factory=list)  # rest_attestations
    fork_of: str | None = None
    archived: bool = False
    has_discussions: bool = True
    protected: dict[str, dict[str, Any]] = field(default_factory=dict)
    labels: dict[str, Label] = field(default_factory=dict)  # key: name, lower case
    issues: dict[int, Issue] = field(default_factory=dict)
    discussions: dict[int, Discussion] = field(default_factory=dict)
    artifacts: dict[int, Artifact] = field(default_factory=dict)
    # Actions secrets by name, with when each was set; values are never kept (GitHub
    # itself answers names and dates only).
    secrets: dict[str, datetime] = field(default_factory=dict)
    # The stand-in alone keeps each secret's value, opened with the repository's private
    # key (``rest_actions_setup``), so a test can prove what the workflows would receive;
    # the REST API never answers it (only the admin API's state shows it).
    secret_values: dict[str, str] = field(default_factory=dict)
    invitations: list[Invitation] = field(default_factory=list)
    # Workflow files GitHub has disabled (by hand, or after 60 days without activity);
    # every other workflow file is active.
    disabled_workflows: dict[str, str] = field(default_factory=dict)  # path -> state
    next_number: int = 1
    # Issues that left: number -> None (deleted: its URL answers 410 Gone) or the
    # (repository full name, number) it was transferred to (its URL answers 301 Moved
    # Permanently there). GitHub's "Get an issue" documents both answers; deleting is
    # GraphQL deleteIssue (REST has no delete: docs.github.com/en/issues/tracking-your-
    # work-with-issues/administering-issues/deleting-an-issue), transferring is GraphQL
    # transferIssue (docs.github.com/en/issues/tracking-your-work-with-issues/
    # administering-issues/transferring-an-issue).
    gone: dict[int, tuple[str, int] | None] = field(default_factory=dict)
    # A fork being created: reads answer 404 this many more times (GitHub forks asynchronously).
    pending_reads: int = 0
    # ... and git requests to it answer "Repository not found" this many more times.
    pending_git: int = 0
    # The repository's Actions secrets key pair (a libsodium private key), made on first use.
    _secrets_key: bytes | None = None

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


@dataclass
class Thread:
    """One notification thread of one user about one subject."""

    id: int
    user: str
    repo: str
    kind: SubjectKind
    number: int
    reason: str
    updated_at: datetime
    unread: bool = True
    last_read_at: datetime | None = None
    latest_comment: tuple[str, int] | None = None  # ("issues"|"pulls", comment id)
    done: bool = False


@dataclass
class Dispatch:
    repo: str
    event_type: str
    client_payload: dict[str, Any]
    token: str | None
    at: str
