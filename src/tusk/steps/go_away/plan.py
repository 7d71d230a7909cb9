"""go-away's plan: what one request blocks, and what cleanup may touch (MISSION G1-G3).

Pure decisions over typed models, no I/O: who is blocked from what
(``decide_scope``, ``apply_scope``), which repositories are affected, which
items are the bot's own (``own_items``: never anyone else's), which log issues
belong to an affected repository, and the report the log issue shows. The
request is checked against GitHub first (``verify``); ``cleanup`` carries the
plan out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tusk.contracts.models import (
    BlockedRepo,
    BlockedUser,
    Blocklist,
    GoAwayRequest,
    TriggerType,
    TrustLevel,
    TrustSource,
)
from tusk.github import trust
from tusk.issues.log_issue import BODY_LIMIT, LogIssue

NUMBER_IN_URL_RE = re.compile(r"/(?:issues|pull|pulls)/(?P<number>\d+)(?:$|[/#?])")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Scope(_Model):
    """What one go-away blocks (G1)."""

    actor: str
    repo: str
    permission: str = Field(
        description="what decided: the actor's role in repo, their author_association, "
        "or why neither was known"
    )
    block_repo: bool = Field(description="the actor owns or collaborates on repo: block repo")
    trust_level: TrustLevel = "external"
    trust_source: TrustSource = "none"
    trust_shown: str = Field(
        default="external",
        description="the level with what it rests on (tusk.github.trust.shown), e.g. "
        "'collaborator, by association (COLLABORATOR): role not visible'",
    )

    @property
    def user(self) -> str:
        # Any user, collaborators included, blocks the bot from what they own.
        return self.actor


class Failure(_Model):
    what: str
    repo: str | None = None
    error: str
    todo: str


class RepoCleanup(_Model):
    repo: str
    skipped: str | None = Field(default=None, description="why nothing was touched")
    fork: str | None = None
    fork_deleted: bool = False
    closed_pulls: list[str] = Field(
        default_factory=list, description="open PRs from the fork, read back closed after it went"
    )
    pulls_closed_by_go_away: list[str] = Field(
        default_factory=list,
        description="of those, the ones the fork's deletion left open, closed by the bot",
    )
    comments_deleted: list[str] = Field(default_factory=list)
    review_comments_deleted: list[str] = Field(default_factory=list)
    discussion_comments_deleted: list[str] = Field(default_factory=list)
    pending_reviews_deleted: list[str] = Field(default_factory=list)
    reviews_kept: list[str] = Field(default_factory=list)


class GoAwayReport(_Model):
    request: GoAwayRequest
    bot: str
    scope: Scope | None = None
    blocklist_updated: bool = False
    newly_blocked_repos: list[str] = Field(default_factory=list)
    newly_blocked_users: list[str] = Field(default_factory=list)
    repos: list[RepoCleanup] = Field(default_factory=list)
    log_issues_closed: list[str] = Field(default_factory=list)
    reaction: str | None = None
    reaction_note: str | None = None
    failures: list[Failure] = Field(default_factory=list)

    @property
    def added_entries(self) -> list[str]:
        return [f"repository `{r}`" for r in self.newly_blocked_repos] + [
            f"user `{u}` (every repository they own)" for u in self.newly_blocked_users
        ]

    @property
    def removed_count(self) -> int:
        return sum(
            len(r.comments_deleted)
            + len(r.review_comments_deleted)
            + len(r.discussion_comments_deleted)
            + len(r.pending_reviews_deleted)
            for r in self.repos
        )


def decide_scope(
    request: GoAwayRequest,
    permission: Mapping[str, Any] | None,
    association: str | None = None,
) -> Scope:
    """G1: the owner or a collaborator blocks the repository; everyone blocks what they
    own. Both may hold.

    The same decision as the poller's trust level (``tusk.github.trust``): ``permission``
    is the collaborator-permission answer, None when it could not be read; then
    ``association``, the go-away comment's ``author_association`` as GitHub showed
    it, decides (OWNER, MEMBER, COLLABORATOR block the repository). With neither,
    only the user-level block applies, failing narrow.
    """
    decision = trust.decide(
        request.repo, request.actor, permission=permission, association=association
    )
    # The owner of a user repository is its admin by definition.
    shown = {"repository_owner": "admin", "none": "unknown"}.get(decision.source, decision.detail)
    return Scope(
        actor=request.actor,
        repo=request.repo,
        permission=shown,
        block_repo=decision.trusted,
        trust_level=decision.level,
        trust_source=decision.source,
        trust_shown=decision.describe(),
    )


def apply_scope(blocklist: Blocklist, scope: Scope, *, at: datetime, source_url: str) -> Blocklist:
    """The blocklist with ``scope`` added; unchanged (the same object) if already there."""
    repos = list(blocklist.repos)
    users = list(blocklist.users)
    if scope.block_repo and not any(e.repo.lower() == scope.repo.lower() for e in repos):
        repos.append(BlockedRepo(repo=scope.repo, by=scope.actor, at=at, source_url=source_url))
    if not blocklist.blocks_user(scope.user):
        users.append(BlockedUser(user=scope.user, at=at, source_url=source_url))
    if len(repos) == len(blocklist.repos) and len(users) == len(blocklist.users):
        return blocklist
    return blocklist.model_copy(update={"repos": tuple(repos), "users": tuple(users)})


def newly_blocked(before: Blocklist, after: Blocklist) -> tuple[list[str], list[str]]:
    old_repos = {e.repo.lower() for e in before.repos}
    old_users = {e.user.lower() for e in before.users}
    return (
        [e.repo for e in after.repos if e.repo.lower() not in old_repos],
        [e.user for e in after.users if e.user.lower() not in old_users],
    )


def affected_repos(scope: Scope, owned_by_actor: Iterable[str]) -> list[str]:
    """Every repository the bot leaves: the blocked one and all the actor owns."""
    seen: dict[str, str] = {}
    candidates = [scope.repo] if scope.block_repo else []
    candidates += [
        name for name in owned_by_actor if name.split("/")[0].lower() == scope.actor.lower()
    ]
    for name in candidates:
        seen.setdefault(name.lower(), name)
    return sorted(seen.values(), key=str.lower)


def skip_reason(repo: str, *, bot: str, control_repo: str) -> str | None:
    """Repositories cleanup must never touch, whatever the scope says."""
    if repo.lower() == control_repo.lower():
        return "the control repository holds Tusk's own state (log, history, memory issues)"
    if repo.split("/")[0].lower() == bot.lower():
        return "the bot's own repository; only forks of affected repositories are deleted"
    return None


def login_of(item: Mapping[str, Any]) -> str | None:
    user = item.get("user")
    return str(user["login"]) if isinstance(user, Mapping) and user.get("login") else None


def own_items(items: Iterable[Mapping[str, Any]], bot: str) -> list[Mapping[str, Any]]:
    """The items written by ``bot``, compared case-insensitively; nobody else's."""
    return [item for item in items if (login_of(item) or "").lower() == bot.lower()]


def pulls_from_fork(pulls: Iterable[Mapping[str, Any]], fork: str) -> list[Mapping[str, Any]]:
    """Open pull requests whose head lives in ``fork``: they close when it is deleted."""
    result = []
    for pull in pulls:
        head_repo = (pull.get("head") or {}).get("repo") or {}
        if (
            pull.get("state") == "open"
            and str(head_repo.get("full_name", "")).lower() == fork.lower()
        ):
            result.append(pull)
    return result


def log_issues_to_close(
    issues: Iterable[LogIssue], repos: Iterable[str], *, keep: int | None
) -> list[LogIssue]:
    """Open log issues about one of ``repos``, except this run's own (``keep``)."""
    wanted = {r.lower() for r in repos}
    return [
        issue
        for issue in issues
        if issue.number != keep
        and issue.state == "open"
        and issue.repo is not None
        and issue.repo.lower() in wanted
    ]


def reaction_path(request: GoAwayRequest) -> str | None:
    """The REST path for reacting to the go-away comment, or None where REST has none."""
    kind: TriggerType = request.comment_type
    base = f"/repos/{request.repo}"
    if kind == "issue_comment":
        return f"{base}/issues/comments/{request.comment_id}/reactions"
    if kind == "review_comment":
        return f"{base}/pulls/comments/{request.comment_id}/reactions"
    if kind in ("issue_body", "pull_request_body"):
        match = NUMBER_IN_URL_RE.search(request.comment_url)
        return f"{base}/issues/{match.group('number')}/reactions" if match else None
    return None  # reviews and discussions: no REST reaction endpoint


def log_title(request: GoAwayRequest) -> str:
    match = NUMBER_IN_URL_RE.search(request.comment_url)
    where = f"{request.repo} #{match.group('number')}" if match else request.repo
    return f"[Agent Log] {where} go away — {request.timestamp:%Y-%m-%d %H:%M}"


def fit_body(body: str, limit: int = BODY_LIMIT) -> str:
    """``body`` cut to what GitHub accepts, saying so; the step summary keeps it whole."""
    if len(body) <= limit:
        return body
    note = (
        "\n\n(Cut here to fit GitHub's limit on issue bodies; the run's step summary has it all.)\n"
    )
    return body[: limit - len(note)] + note
