"""The local GitHub's state: the behaviours GitHub attaches to its records.

Nothing here does I/O except through ``World.git`` (bare repositories on
disk). The server serialises access with ``World.lock``; the methods assume
the caller holds it. The records are ``world_records``, the clock ``world_clock``.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tusk.sandbox.secondary import SecondaryLimits
from tusk.sandbox.world_clock import Clock
from tusk.sandbox.world_records import (
    Comment,
    Dispatch,
    Issue,
    Label,
    Repo,
    ReviewComment,
    SubjectKind,
    Thread,
    Token,
    User,
)
from tusk.text import markdown

BODY_LIMIT = 65_536
TITLE_LIMIT = 256
COMMENT_LIMIT = 2_500
PERMISSIONS = ("none", "read", "triage", "write", "maintain", "admin")
PUSH_PERMISSIONS = frozenset({"write", "maintain", "admin"})


# --------------------------------------------------------------------------- the world


def mentioned_logins(text: str | None) -> list[str]:
    """Logins @mentioned in markdown as GitHub links them on its rendering (entities
    decoded; not in code or links), quoted text aside: ``tusk.text.markdown``'s grammar."""
    if not text or ("@" not in text and "&" not in text):
        return []
    seen: list[str] = []
    for mention in markdown.render(text).mentions(markdown.TRIGGERS):
        if "/" not in mention.login and mention.login not in seen:
            seen.append(mention.login)
    return seen


class SandboxError(Exception):
    """A request GitHub would refuse; carries the status and GitHub's error body."""

    def __init__(self, status: int, message: str, errors: list[Any] | None = None, **extra: Any):
        super().__init__(message)
        self.status = status
        self.message = message
        self.errors = errors
        self.extra = extra


@dataclass
class World:
    users: dict[str, User] = field(default_factory=dict)
    tokens: dict[str, Token] = field(default_factory=dict)
    repos: dict[str, Repo] = field(default_factory=dict)  # key: full name, lower case
    # A renamed or transferred repository's former names (lower case) -> its id: GitHub
    # redirects them to /repositories/{id} (301 for reads, 307 for other methods).
    renamed: dict[str, int] = field(default_factory=dict)
    threads: list[Thread] = field(default_factory=list)
    dispatches: list[Dispatch] = field(default_factory=list)
    inbox_modified: dict[str, datetime] = field(default_factory=dict)
    clock: Clock = field(default_factory=Clock)
    git: Any = None  # tusk.sandbox.gitstore.GitStore
    lock: threading.RLock = field(default_factory=threading.RLock)
    rate_used: dict[tuple[str, str, int], int] = field(default_factory=dict)
    fork_ready_after_reads: int = 0
    fork_git_ready_after_requests: int = 0
    # Seconds a new issue stays out of listings and search (settings.listing_lag_seconds).
    listing_lag: float = 0.0
    # Lags for successive new issues, in turn (settings.listing_lags_seconds); when set,
    # they replace listing_lag. Different lags let a later issue show up in listings
    # before an earlier one: GitHub documents no order in which listings catch up, only
    # that an object's own URL is read-after-write (reference/github-api.md, "listing
    # after a write"; reference/peers-and-github-2026-12.md, rows 25-26).
    listing_lags: list[float] = field(default_factory=list)
    _issues_created: int = 0
    # Seconds a new issue comment stays out of comment listings
    # (settings.comment_listing_lag_seconds).
    comment_listing_lag: float = 0.0
    attestation_seq: int = 0  # rest_attestations: the last id given
    # Listings of the inbox a "mark as read" answered 202 waits before it lands
    # (settings.mark_read_late_listings; 0: at once, 205). GitHub: "If the number of
    # notifications is too large to complete in one request, you will receive a 202
    # Accepted status and GitHub will run an asynchronous process to mark notifications
    # as "read."" (docs.github.com/rest/activity/notifications#mark-notifications-as-read)
    mark_read_late_listings: int = 0
    # The most items a page holds, whatever per_page asks (settings.page_size; None:
    # GitHub's own maximum per operation). Small pages make short lists span pages, so
    # a test walks every page after the first through GitHub's /repositories/{id} links.
    page_size: int | None = None
    # Whether deleting a fork closes the open PRs from it (settings.fork_deletion_closes_pulls).
    fork_deletion_closes_pulls: bool = True
    # Whether a discussion notification has a subject.url (settings.discussion_subject_url):
    # populated since late 2024 with a URL that answers 404 (gitify-app/gitify#1582); null
    # before (gitify-app/gitify#521).
    discussion_subject_url: bool = True
    late_marks: list[Any] = field(default_factory=list)  # rest_notifications.LateMark
    # GitHub's secondary rate limits; on unless the scenario turns them off.
    secondary: SecondaryLimits = field(default_factory=SecondaryLimits)
    # How far tests moved the sandbox's wall clock (POST /_sandbox/clock); rate-limit
    # windows and listing lag run on it, so a test's injected sleep can pass the time.
    time_offset: float = 0.0
    _next_id: int = 1000

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def wall(self) -> float:
        """Seconds since the epoch as the sandbox sees them (real time plus the offset)."""
        return time.time() + self.time_offset

    def next_listing_lag(self) -> float:
        """Seconds the next new issue stays out of listings and search."""
        if not self.listing_lags:
            return self.listing_lag
        lag = self.listing_lags[self._issues_created % len(self.listing_lags)]
        self._issues_created += 1
        return lag

    def listed(self, item: Issue | Comment) -> bool:
        """Whether listings (and search) show ``item`` yet (GitHub's listings can lag a write)."""
        return item.listed_from is None or self.wall() >= item.listed_from

    # -- lookups

    def user(self, login: str) -> User | None:
        return self.users.get(login.lower())

    def repo(self, owner: str, name: str) -> Repo | None:
        return self.repos.get(f"{owner}/{name}".lower())

    def permission(self, repo: Repo, login: str | None) -> str:
        """The highest grant ``login`` holds on ``repo`` (owner: admin)."""
        if login is None:
            return "none" if repo.private else "read"
        if login.lower() == repo.owner.lower():
            return "admin"
        granted = {k.lower(): v for k, v in repo.collaborators.items()}.get(login.lower())
        if granted:
            return granted
        return "none" if repo.private else "read"

    def can_push(self, repo: Repo, login: str | None) -> bool:
        return self.permission(repo, login) in PUSH_PERMISSIONS

    def can_see(self, repo: Repo, login: str | None) -> bool:
        return self.permission(repo, login) != "none"

    def add_repo(self, repo: Repo) -> None:
        self.repos[repo.full_name.lower()] = repo

    def forks_of(self, repo: Repo) -> list[Repo]:
        return [
            r for r in self.repos.values() if (r.fork_of or "").lower() == repo.full_name.lower()
        ]

    # -- notifications

    def touch_inbox(self, login: str, moment: datetime) -> None:
        self.inbox_modified[login.lower()] = moment

    def thread_for(self, login: str, repo: Repo, kind: SubjectKind, number: int) -> Thread | None:
        for thread in self.threads:
            if (
                thread.user.lower() == login.lower()
                and thread.repo.lower() == repo.full_name.lower()
                and thread.number == number
            ):
                return thread
        return None

    def notify_activity(
        self,
        repo: Repo,
        kind: SubjectKind,
        number: int,
        actor: str,
        text: str | None,
        moment: datetime,
        *,
        subscribers: set[str],
        author: str,
        latest_comment: tuple[str, int] | None,
    ) -> None:
        """Deliver notifications for new content by ``actor`` as GitHub would.

        Mentioned users get a thread whose reason becomes ``mention`` and stays
        so (sticky); subscribers (author, earlier commenters, earlier mentions)
        get their existing thread bumped, or one with reason ``comment``.
        The actor never notifies themself; users who cannot see the repository
        are not notified.
        """
        mentioned = [m for m in mentioned_logins(text) if self.user(m) is not None]
        recipients: dict[str, str] = {}
        for login in subscribers:
            recipients[login.lower()] = "author" if login.lower() == author.lower() else "comment"
        for login in mentioned:
            recipients[self.users[login.lower()].login.lower()] = "mention"
        for login, reason in recipients.items():
            user = self.user(login)
            if user is None or login == actor.lower() or not self.can_see(repo, user.login):
                continue
            thread = self.thread_for(user.login, repo, kind, number)
            if thread is None:
                thread = Thread(
                    id=self.new_id(),
                    user=user.login,
                    repo=repo.full_name,
                    kind=kind,
                    number=number,
                    reason=reason,
                    updated_at=moment,
                )
                self.threads.append(thread)
            elif reason == "mention":
                thread.reason = "mention"  # sticky from now on
            thread.unread = True
            thread.done = False
            thread.updated_at = moment
            thread.latest_comment = latest_comment
            self.touch_inbox(user.login, moment)

    def record_activity(
        self,
        repo: Repo,
        issue: Issue,
        actor: str,
        text: str | None,
        moment: datetime,
        latest_comment: tuple[str, int] | None = None,
    ) -> None:
        """New content on an issue or PR: notify, then subscribe the actor and the mentioned."""
        kind: SubjectKind = "PullRequest" if issue.pull else "Issue"
        subscribers = set(issue.subscribers)
        self.notify_activity(
            repo,
            kind,
            issue.number,
            actor,
            text,
            moment,
            subscribers=subscribers,
            author=issue.author,
            latest_comment=latest_comment,
        )
        issue.subscribers.add(actor)
        issue.subscribers.update(m for m in mentioned_logins(text) if self.user(m))

    def check_body(self, body: str | None, resource: str) -> None:
        if body is not None and len(body) > BODY_LIMIT:
            raise SandboxError(
                422,
                "Validation Failed",
                errors=[
                    {
                        "resource": resource,
                        "code": "custom",
                        "field": "body",
                        "message": f"body is too long (maximum is {BODY_LIMIT} characters)",
                    }
                ],
            )

    def check_title(self, title: object, resource: str) -> None:
        if isinstance(title, str) and len(title) > TITLE_LIMIT:
            raise SandboxError(
                422,
                "Validation Failed",
                errors=[
                    {
                        "resource": resource,
                        "code": "custom",
                        "field": "title",
                        "message": f"title is too long (maximum is {TITLE_LIMIT} characters)",
                    }
                ],
            )

    def add_comment(
        self, repo: Repo, issue: Issue, author: str, body: str, moment: datetime
    ) -> Comment:
        if len(issue.comments) >= COMMENT_LIMIT:
            raise SandboxError(
                403, f"Commenting is disabled on issues with more than {COMMENT_LIMIT} comments"
            )
        self.check_body(body, "IssueComment")
        comment = Comment(
            id=self.new_id(), author=author, body=body, created_at=moment, updated_at=moment
        )
        issue.comments.append(comment)
        issue.updated_at = moment
        self.record_activity(repo, issue, author, body, moment, ("issues", comment.id))
        return comment

    def find_comment(self, repo: Repo, comment_id: int) -> tuple[Issue, Comment] | None:
        for issue in repo.issues.values():
            for comment in issue.comments:
                if comment.id == comment_id:
                    return issue, comment
        return None

    def find_review_comment(
        self, repo: Repo, comment_id: int
    ) -> tuple[Issue, ReviewComment] | None:
        for issue in repo.issues.values():
            if issue.pull is None:
                continue
            for comment in issue.pull.review_comments:
                if comment.id == comment_id:
                    return issue, comment
        return None

    def ensure_labels(self, repo: Repo, names: list[str]) -> list[str]:
        """``names`` as the repository spells its labels, once each. Label names are
        case-insensitive on GitHub (recorded: @octokit/fixtures add-labels-to-issue); a
        missing label is created on the fly with the default colour."""
        spelled: list[str] = []
        for name in names:
            label = repo.labels.get(name.lower())
            if label is None:
                label = repo.labels[name.lower()] = Label(id=self.new_id(), name=name)
            if label.name not in spelled:
                spelled.append(label.name)
        return spelled

    def rename_repo(self, repo: Repo, name: str) -> None:
        """Rename ``repo``: everything that names it follows, and its old name redirects
        to its id (``renamed``), as GitHub's does."""
        old = repo.full_name
        new = f"{repo.owner}/{name}"
        del self.repos[old.lower()]
        if self.git is not None and self.git.exists(old):
            target = self.git.path(new)
            target.parent.mkdir(parents=True, exist_ok=True)
            self.git.path(old).rename(target)
        repo.name = name
        self.repos[new.lower()] = repo
        self.renamed[old.lower()] = repo.id
        self.renamed.pop(new.lower(), None)
        for other in self.repos.values():
            if (other.fork_of or "").lower() == old.lower():
                other.fork_of = new
            for issue in other.issues.values():
                if issue.pull and issue.pull.head_repo.lower() == old.lower():
                    issue.pull.head_repo = new
            other.gone = {
                n: (new, moved[1]) if moved and moved[0].lower() == old.lower() else moved
                for n, moved in other.gone.items()
            }
        for thread in self.threads:
            if thread.repo.lower() == old.lower():
                thread.repo = new

    def delete_repo(self, repo: Repo, moment: datetime) -> None:
        """Delete a repository; open PRs whose head lives in it are closed, unless
        ``fork_deletion_closes_pulls`` is off. GitHub does not document either: tests in
        2025-26 saw them closed (refined-github/sandbox#129, octocat/Spoon-Knife#37103),
        one in 2021 saw them stay open (octocat/Hello-World#1037)."""
        for other in self.repos.values():
            for issue in other.issues.values():
                pull = issue.pull
                if pull and pull.head_repo.lower() == repo.full_name.lower():
                    pull.head_repo = ""
                    closes = self.fork_deletion_closes_pulls
                    if closes and issue.state == "open" and other is not repo:
                        issue.state = "closed"
                        issue.closed_at = moment
                        issue.updated_at = moment
        del self.repos[repo.full_name.lower()]
        self.threads = [t for t in self.threads if t.repo.lower() != repo.full_name.lower()]
        if self.git is not None:
            self.git.remove(repo.full_name)


CLOSING = re.compile(r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+#(\d+)\b", re.IGNORECASE)


def closes_issue(body: str | None, number: int) -> bool:
    """Whether a PR body links issue ``number`` with a closing keyword ("Fixes #12")."""
    return any(int(found) == number for found in CLOSING.findall(body or ""))
