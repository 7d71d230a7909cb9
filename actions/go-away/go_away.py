"""go-away: block the bot where it was asked to leave, and remove its traces.

MISSION G1-G3. The pure part decides: who is blocked from what (``decide_scope``,
``apply_scope``), which repositories are affected, which items are the bot's
own (``own_items``: never anyone else's), which log issues belong to an
affected repository. ``GoAwayRun`` is the I/O executor: every GitHub call goes
through one ``Gateway``; each failure becomes a ``Failure`` with what to do and
never stops the steps after it. The blocklist is written first, so a cleanup
that fails half way still leaves the bot blocked.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from tusk import trust
from tusk.config import Settings
from tusk.contracts import (
    BlockedRepo,
    BlockedUser,
    Blocklist,
    GoAwayRequest,
    TriggerType,
    TrustLevel,
    TrustSource,
)
from tusk.errors import UserError
from tusk.forks import forks_by_parent
from tusk.github import Forbidden, Gateway, GitHubError, NotFound
from tusk.log_issue import BODY_LIMIT, LogIssue, find_log_issues
from tusk.mentions import is_go_away

NUMBER_IN_URL_RE = re.compile(r"/(?:issues|pull|pulls)/(?P<number>\d+)(?:$|[/#?])")
DISCUSSION_IN_URL_RE = re.compile(r"/discussions/(?P<number>\d+)(?:$|[/#?])")
REST_ID_RE = re.compile(r"\d{1,20}")


class UpdateBlocklist(Protocol):
    """``StateStore.update_blocklist``: concurrency-safe read-change-write."""

    def __call__(
        self, change: Callable[[Blocklist], Blocklist], *, note: str = ""
    ) -> Blocklist: ...


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
    closed_pulls: list[str] = Field(default_factory=list)
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


# --------------------------------------------------------------------------- pure decisions


def decide_scope(
    request: GoAwayRequest,
    permission: Mapping[str, Any] | None,
    association: str | None = None,
) -> Scope:
    """G1: the owner or a collaborator blocks the repository; everyone blocks what they
    own. Both may hold.

    The same decision as the poller's trust level (``tusk.trust``): ``permission``
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


def describe_error(error: Exception) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__


# --------------------------------------------------------------------------- the request itself

DISCUSSION_QUERY = """
query($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    discussion(number: $number) {
      id url body author { login } authorAssociation
      comments(first: 100, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes {
          id url body author { login } authorAssociation
          replies(first: 100) { nodes { id url body author { login } authorAssociation } }
        }
      }
    }
  }
}
"""

REPOSITORY_ID = (
    "query($owner: String!, $name: String!) { repository(owner: $owner, name: $name) { id } }"
)
BOT_DISCUSSION_COMMENTS = """
query($bot: String!, $repo: ID!, $after: String) {
  user(login: $bot) {
    repositoryDiscussionComments(first: 100, after: $after, repositoryId: $repo) {
      pageInfo { hasNextPage endCursor }
      nodes { id url body author { login } }
    }
  }
}
"""
DELETE_DISCUSSION_COMMENT = """
mutation($id: ID!) { deleteDiscussionComment(input: {id: $id}) { clientMutationId } }
"""


def own_discussion_comments(gateway: Gateway, repo: str, bot: str) -> list[Mapping[str, Any]]:
    """The bot's discussion comments and replies in ``repo``, oldest first. A comment wiped
    earlier (deleted while it had replies: its body is gone) is left out."""
    owner, name = repo.split("/", 1)
    found = gateway.graphql(REPOSITORY_ID, {"owner": owner, "name": name})
    repo_id = (found.get("repository") or {}).get("id")
    if not repo_id:
        return []
    comments: list[Mapping[str, Any]] = []
    variables: dict[str, Any] = {"bot": bot, "repo": repo_id, "after": None}
    while True:
        user = gateway.graphql(BOT_DISCUSSION_COMMENTS, variables).get("user") or {}
        page = user.get("repositoryDiscussionComments") or {}
        comments += [
            node
            for node in page.get("nodes") or []
            if node
            and ((node.get("author") or {}).get("login") or "").lower() == bot.lower()
            and node.get("body")
        ]
        info = page.get("pageInfo") or {}
        if not info.get("hasNextPage"):
            return comments
        variables["after"] = info["endCursor"]


FORGED_HINT = (
    "Nothing was blocked or deleted. The poller dispatches go-away only for a comment "
    "that says it; check who can send repository_dispatch to the control repository."
)


def _refuse(request: GoAwayRequest, why: str) -> UserError:
    return UserError(
        f"the go-away request {request.comment_url or request.comment_id} cannot be verified: "
        f"{why}",
        FORGED_HINT,
    )


def _number(request: GoAwayRequest, pattern: re.Pattern[str]) -> int:
    match = pattern.search(request.comment_url)
    if not match:
        raise _refuse(request, "its URL names no issue, pull request or discussion number")
    return int(match.group("number"))


def _fetch_rest(gateway: Gateway, request: GoAwayRequest) -> Mapping[str, Any]:
    if not REST_ID_RE.fullmatch(request.comment_id):
        raise _refuse(request, f"{request.comment_id!r} is not a REST id")
    base, kind, ident = f"/repos/{request.repo}", request.comment_type, request.comment_id
    paths = {
        "issue_comment": f"{base}/issues/comments/{ident}",
        "review_comment": f"{base}/pulls/comments/{ident}",
        "issue_body": f"{base}/issues/{ident}",
        "pull_request_body": f"{base}/issues/{ident}",
    }
    path = paths.get(kind) or (f"{base}/pulls/{_number(request, NUMBER_IN_URL_RE)}/reviews/{ident}")
    found = gateway.get(path)
    return {
        "author": login_of(found),
        "body": found.get("body"),
        "url": found.get("html_url"),
        "association": found.get("author_association"),
    }


def _fetch_discussion(gateway: Gateway, request: GoAwayRequest) -> Mapping[str, Any] | None:
    owner, name = request.repo.split("/", 1)
    variables: dict[str, Any] = {
        "owner": owner,
        "name": name,
        "number": _number(request, DISCUSSION_IN_URL_RE),
        "after": None,
    }
    while True:
        data = gateway.graphql(DISCUSSION_QUERY, variables)
        discussion = ((data.get("repository") or {}).get("discussion")) or None
        if discussion is None:
            return None
        if request.comment_type == "discussion_body":
            nodes = [discussion]
        else:
            comments = discussion["comments"]
            nodes = [
                node
                for comment in comments["nodes"]
                for node in [comment, *((comment.get("replies") or {}).get("nodes") or [])]
            ]
        for node in nodes:
            if node.get("id") == request.comment_id:
                author = (node.get("author") or {}).get("login")
                return {
                    "author": author,
                    "body": node.get("body"),
                    "url": node.get("url"),
                    "association": node.get("authorAssociation"),
                }
        page = (
            discussion["comments"]["pageInfo"] if request.comment_type != "discussion_body" else {}
        )
        if not page.get("hasNextPage"):
            return None
        variables["after"] = page["endCursor"]


class Verified(_Model):
    """A go-away request as GitHub confirmed it."""

    request: GoAwayRequest
    author_association: str | None = Field(
        default=None, description="the comment's author_association, as GitHub shows it"
    )


def verify(gateway: Gateway, request: GoAwayRequest, *, bot: str, phrase: str) -> Verified:
    """The request, checked against GitHub: ``actor`` really wrote ``@bot <phrase>`` there.

    A ``repository_dispatch`` payload is only as trustworthy as whoever holds a
    dispatch token, and it decides what gets blocked and deleted; so the comment
    is read back from GitHub (inside ``request.repo``) before anything is done.
    Returns the request with GitHub's own URL of the comment, and the comment's
    ``author_association`` (the scope's fallback; the payload's own trust level
    is never believed).
    """
    try:
        if request.comment_type.startswith("discussion"):
            found = _fetch_discussion(gateway, request)
        else:
            found = _fetch_rest(gateway, request)
    except NotFound:
        found = None
    if found is None:
        raise _refuse(request, f"GitHub has no such {request.comment_type} in {request.repo}")
    author = str(found.get("author") or "")
    if author.lower() != request.actor.lower():
        raise _refuse(request, f"it was written by `{author or 'ghost'}`, not `{request.actor}`")
    if not is_go_away(str(found.get("body") or ""), bot=bot, phrase=phrase):
        raise _refuse(request, f"it does not say `@{bot} {phrase}` (any more)")
    url = found.get("url")
    confirmed = request.model_copy(update={"comment_url": str(url)}) if url else request
    association = found.get("association")
    return Verified(request=confirmed, author_association=str(association) if association else None)


def verify_request(
    gateway: Gateway, request: GoAwayRequest, *, bot: str, phrase: str
) -> GoAwayRequest:
    """``verify``'s request alone."""
    return verify(gateway, request, bot=bot, phrase=phrase).request


# --------------------------------------------------------------------------- the executor

RETRY = "run the go-away workflow again for this job (safe: it only removes what is left)"
RETRY_TODO = RETRY[0].upper() + RETRY[1:] + "."


class GoAwayRun:
    """Carry out one go-away request against GitHub, collecting a report."""

    def __init__(
        self,
        request: GoAwayRequest,
        *,
        gateway: Gateway,
        settings: Settings,
        update_blocklist: UpdateBlocklist,
        sleep: Callable[[float], object],
        reaction: str | None,
        author_association: str | None = None,
    ) -> None:
        self.request = request
        # The go-away comment's author_association as GitHub showed it (``verify``).
        self.author_association = author_association
        self.gateway = gateway
        self.settings = settings
        self.update_blocklist = update_blocklist
        self.sleep = sleep
        self.reaction = reaction
        self.report = GoAwayReport(request=request, bot=settings.bot)
        self._deletes = 0

    # -- helpers

    def _fail(self, what: str, error: Exception, todo: str, repo: str | None = None) -> None:
        self.report.failures.append(
            Failure(what=what, repo=repo, error=describe_error(error), todo=todo)
        )

    def _pause(self) -> None:
        # GitHub asks for a pause between content-changing requests (the gateway also
        # paces every write under the content-creation limit, tusk.pacing).
        if self._deletes:
            self.sleep(self.settings.go_away.delete_pause_seconds)
        self._deletes += 1

    def _delete(self, path: str) -> None:
        self._pause()
        self.gateway.delete(path)

    # -- the steps

    def run(self, *, log_issue_number: int | None = None) -> GoAwayReport:
        self.scope()
        try:
            self.block()
        except (GitHubError, UserError) as error:
            # Reported, and the cleanup still runs: it is what the person asked for.
            self._fail(
                "could not update the blocklist",
                error,
                f"Add the entries listed above to the blocklist issue of "
                f"{self.settings.control_repo} by hand, or {RETRY}.",
            )
        self.acknowledge()
        repos = self.affected()
        forks = self.bot_forks() if repos else {}
        for repo in repos:
            self.report.repos.append(self.clean_repo(repo, forks))
        self.close_log_issues(repos, keep=log_issue_number)
        return self.report

    def scope(self) -> Scope:
        """G1's scope, decided like the poller's trust level (``tusk.trust``)."""
        request = self.request
        owner_repo = request.repo
        user = request.actor
        permission: Mapping[str, Any] | None = None
        if not trust.owns(owner_repo, user):  # an owner needs no request
            try:
                permission = self.gateway.get(
                    f"/repos/{owner_repo}/collaborators/{user}/permission"
                )
            except (Forbidden, NotFound):
                # 403 "Must have push access to view collaborator permission." is the
                # bot's normal case (yegor256/rultor#1407): author_association decides.
                permission = None
            except GitHubError as error:
                permission = None
                self._fail(
                    f"could not check whether `{user}` may write to {owner_repo}",
                    error,
                    f"The go-away comment's author_association "
                    f"(`{self.author_association or 'missing'}`) decided instead. If `{user}` "
                    f"maintains {owner_repo} and it was not blocked, add it to the blocklist "
                    "issue by hand or re-run once GitHub answers.",
                    repo=owner_repo,
                )
        self.report.scope = decide_scope(request, permission, self.author_association)
        return self.report.scope

    def block(self) -> None:
        scope = self.report.scope
        assert scope is not None
        before: list[Blocklist] = []

        def change(current: Blocklist) -> Blocklist:
            before.append(current)
            return apply_scope(
                current, scope, at=self.request.timestamp, source_url=self.request.comment_url
            )

        after = self.update_blocklist(change, note=f"go away: {self.request.comment_url}")
        repos, users = newly_blocked(before[-1], after)
        self.report.blocklist_updated = True
        self.report.newly_blocked_repos = repos
        self.report.newly_blocked_users = users

    def acknowledge(self) -> None:
        if self.reaction is None:
            self.report.reaction_note = "reactions are turned off"
            return
        path = reaction_path(self.request)
        if path is None:
            self.report.reaction_note = (
                f"a {self.request.comment_type} cannot get a reaction through the REST API"
            )
            return
        try:
            self.gateway.post(path, json={"content": self.reaction})
            self.report.reaction = self.reaction
        except GitHubError as error:
            self._fail(
                "could not react to the go-away comment",
                error,
                "Nothing to undo; the blocklist was updated. "
                "Reply to the person by hand if needed.",
                repo=self.request.repo,
            )

    def affected(self) -> list[str]:
        scope = self.report.scope
        assert scope is not None
        owned: list[str] = []
        try:
            # The public listing omits private repositories; the bot's own listing
            # adds those of the actor's it was given access to (and may have traces in).
            listings = [
                (f"/users/{scope.actor}/repos", {"type": "owner"}),
                ("/user/repos", {"affiliation": "collaborator,organization_member"}),
            ]
            owned = [
                str(r["full_name"])
                for path, params in listings
                for r in self.gateway.paginate(path, params=params)
            ]
        except GitHubError as error:
            self._fail(
                f"could not list the repositories `{scope.actor}` owns",
                error,
                "The user is blocked, but the bot's traces in their repositories were not "
                "removed. " + RETRY_TODO,
            )
        return affected_repos(scope, owned)

    def bot_forks(self) -> dict[str, str]:
        """The bot's forks by parent, whatever their names (tusk.forks; one GraphQL
        request per 100 forks, private ones included)."""
        try:
            return forks_by_parent(self.gateway, self.settings.bot)
        except (GitHubError, UserError) as error:
            self._fail(
                "could not list the bot's forks",
                error,
                f"Delete the bot's forks of the affected repositories by hand. {RETRY_TODO}",
            )
            return {}

    def clean_repo(self, repo: str, forks: Mapping[str, str]) -> RepoCleanup:
        bot = self.settings.bot
        skipped = skip_reason(repo, bot=bot, control_repo=self.settings.control_repo)
        cleanup = RepoCleanup(repo=repo, skipped=skipped, fork=forks.get(repo.lower()))
        if skipped:
            return cleanup
        pulls: list[Mapping[str, Any]] = []
        try:
            pulls = list(self.gateway.paginate(f"/repos/{repo}/pulls", params={"state": "all"}))
        except GitHubError as error:
            self._fail(f"could not list the pull requests of {repo}", error, RETRY_TODO, repo)
        self._reviews(repo, pulls, cleanup)
        if cleanup.fork:
            self._delete_fork(repo, cleanup.fork, pulls, cleanup)
        self._comments(repo, "issues", cleanup.comments_deleted)
        self._comments(repo, "pulls", cleanup.review_comments_deleted)
        self._discussion_comments(repo, cleanup.discussion_comments_deleted)
        return cleanup

    def _reviews(self, repo: str, pulls: Sequence[Mapping[str, Any]], cleanup: RepoCleanup) -> None:
        for pull in pulls:
            number = pull["number"]
            try:
                reviews = own_items(
                    self.gateway.paginate(f"/repos/{repo}/pulls/{number}/reviews"),
                    self.settings.bot,
                )
                for review in reviews:
                    url = str(review.get("html_url") or f"{pull.get('html_url')}#review")
                    if review.get("state") == "PENDING":
                        # Only a pending review can be deleted; a submitted one stays.
                        with contextlib.suppress(NotFound):
                            self._delete(f"/repos/{repo}/pulls/{number}/reviews/{review['id']}")
                        cleanup.pending_reviews_deleted.append(url)
                    else:
                        cleanup.reviews_kept.append(url)
            except GitHubError as error:
                self._fail(
                    f"could not check the bot's reviews on {repo}#{number}", error, RETRY_TODO, repo
                )

    def _delete_fork(
        self, repo: str, fork: str, pulls: Sequence[Mapping[str, Any]], cleanup: RepoCleanup
    ) -> None:
        closing = [str(p.get("html_url")) for p in pulls_from_fork(pulls, fork)]
        try:
            self._delete(f"/repos/{fork}")
        except NotFound:
            pass  # already deleted (a concurrent go-away): the outcome is the same
        except GitHubError as error:
            self._fail(
                f"could not delete the bot's fork {fork}",
                error,
                f"Give the agent token the `delete_repo` scope (fine-grained: Administration "
                f"write on {fork}), then delete {fork} by hand or run the go-away again; its "
                f"open pull requests on {repo} close with it.",
                repo,
            )
            return
        cleanup.fork_deleted = True
        cleanup.closed_pulls = closing

    def _comments(self, repo: str, kind: Literal["issues", "pulls"], deleted: list[str]) -> None:
        label = "issue and PR comments" if kind == "issues" else "review comments"
        try:
            # Collected first: deleting while paginating would shift the pages.
            mine = own_items(
                self.gateway.paginate(f"/repos/{repo}/{kind}/comments"), self.settings.bot
            )
        except GitHubError as error:
            self._fail(f"could not list the {label} of {repo}", error, RETRY_TODO, repo)
            return
        for comment in mine:
            try:
                self._delete(f"/repos/{repo}/{kind}/comments/{comment['id']}")
                deleted.append(str(comment.get("html_url") or comment["id"]))
            except NotFound:
                continue  # already gone (a concurrent go-away): nothing left to do
            except GitHubError as error:
                self._fail(
                    f"could not delete {comment.get('html_url') or comment['id']}",
                    error,
                    f"Delete it by hand, or {RETRY}.",
                    repo,
                )

    def _discussion_comments(self, repo: str, deleted: list[str]) -> None:
        """The bot's discussion comments and replies in ``repo``, through GraphQL (REST has
        no discussions): listed with ``User.repositoryDiscussionComments``, deleted newest
        first with ``deleteDiscussionComment`` (a reply before the comment it answers)."""
        try:
            mine = own_discussion_comments(self.gateway, repo, self.settings.bot)
        except GitHubError as error:
            self._fail(f"could not list the discussion comments of {repo}", error, RETRY_TODO, repo)
            return
        for comment in reversed(mine):
            try:
                self._pause()
                self.gateway.graphql(DELETE_DISCUSSION_COMMENT, {"id": comment["id"]})
                deleted.append(str(comment.get("url") or comment["id"]))
            except GitHubError as error:
                if "could not resolve" in str(error).lower():
                    continue  # already gone (a concurrent go-away)
                self._fail(
                    f"could not delete {comment.get('url') or comment['id']}",
                    error,
                    f"Delete it by hand, or {RETRY}.",
                    repo,
                )

    def close_log_issues(self, repos: Sequence[str], *, keep: int | None) -> None:
        if not repos:
            return
        try:
            # One listing of the open log issues serves every affected repository.
            issues = find_log_issues(self.gateway, self.settings, state="open")
        except GitHubError as error:
            self._fail("could not list the open log issues", error, RETRY_TODO)
            return
        for issue in log_issues_to_close(issues, repos, keep=keep):
            try:
                self.gateway.patch(
                    f"/repos/{self.settings.control_repo}/issues/{issue.number}",
                    json={"state": "closed", "state_reason": "not_planned"},
                )
                self.report.log_issues_closed.append(issue.url or f"#{issue.number}")
            except GitHubError as error:
                self._fail(
                    f"could not close log issue #{issue.number}",
                    error,
                    "Close it by hand as not planned.",
                )
