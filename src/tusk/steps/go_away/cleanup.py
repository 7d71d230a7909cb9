"""go-away's cleanup: the plan carried out against GitHub (MISSION G1-G3).

``GoAwayRun`` does the I/O: every GitHub call goes through one ``Gateway``;
each failure becomes a ``Failure`` with what to do and never stops the steps
after it. The blocklist is written first, so a cleanup that fails half way
still leaves the bot blocked. What is decided (the scope, what is the bot's,
what to close) comes from ``plan``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Protocol

from tusk.contracts.config import Settings
from tusk.contracts.models import Blocklist, GoAwayRequest
from tusk.errors import UserError, first_line
from tusk.github import trust
from tusk.github.forks import forks_by_parent
from tusk.github.gateway import Forbidden, Gateway, GitHubError, NotFound
from tusk.issues.log_issue import find_log_issues
from tusk.steps.go_away.plan import (
    Failure,
    GoAwayReport,
    RepoCleanup,
    Scope,
    affected_repos,
    apply_scope,
    decide_scope,
    log_issues_to_close,
    login_of,
    newly_blocked,
    own_items,
    pulls_from_fork,
    reaction_path,
    skip_reason,
)


class UpdateBlocklist(Protocol):
    """``StateStore.update_blocklist``: concurrency-safe read-change-write."""

    def __call__(
        self, change: Callable[[Blocklist], Blocklist], *, note: str = ""
    ) -> Blocklist: ...


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
            Failure(what=what, repo=repo, error=first_line(error), todo=todo)
        )

    def _pause(self) -> None:
        # GitHub asks for a pause between content-changing requests (the gateway also
        # paces every write under the content-creation limit, tusk.github.pacing).
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
        """G1's scope, decided like the poller's trust level (``tusk.github.trust``)."""
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
        """The bot's forks by parent, whatever their names (tusk.github.forks; one GraphQL
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
        self._verify_pulls_closed(repo, pulls_from_fork(pulls, fork), cleanup)

    def _verify_pulls_closed(
        self, repo: str, expected: Sequence[Mapping[str, Any]], cleanup: RepoCleanup
    ) -> None:
        """Re-read each pull request the fork's deletion should have closed (GitHub does
        not document that it does: a 2021 test saw them stay open, octocat/Hello-World#1037)
        and close the bot's own that are still open."""
        for pull in expected:
            url = str(pull.get("html_url") or f"{repo}#{pull['number']}")
            path = f"/repos/{repo}/pulls/{pull['number']}"
            try:
                now = self.gateway.get(path)
                if now.get("state") == "open":
                    if (login_of(now) or "").lower() != self.settings.bot.lower():
                        raise UserError(f"{url} is still open and is not the bot's", "")
                    self.gateway.patch(path, json={"state": "closed"})
                    cleanup.pulls_closed_by_go_away.append(url)
                cleanup.closed_pulls.append(url)
            except (GitHubError, UserError) as error:
                self._fail(
                    f"could not make sure {url} is closed",
                    error,
                    f"Close {url} by hand, or {RETRY}.",
                    repo,
                )

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
