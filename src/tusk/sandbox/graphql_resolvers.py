"""The local GitHub's GraphQL resolvers: the query and mutation roots, actors,
repositories, issues, pull requests and their reviews, as plain dicts built lazily
over the sandbox state (a value that is callable is called with the field's
arguments). Discussions and reactions have their own modules
(``graphql_discussions``, ``graphql_reactions``); whole-issue mutations are in
``graphql_issues``."""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from tusk.sandbox import graphql_discussions, graphql_reactions
from tusk.sandbox.graphql_paging import connection
from tusk.sandbox.graphql_reactions import reaction_groups
from tusk.sandbox.shapes import Shapes
from tusk.sandbox.shapes_repos import node_id
from tusk.sandbox.world import SandboxError, World
from tusk.sandbox.world_clock import iso
from tusk.sandbox.world_records import (
    Comment,
    Discussion,
    DiscussionComment,
    Issue,
    Repo,
    Review,
    ReviewComment,
    Token,
)

if TYPE_CHECKING:
    from tusk.sandbox.app_view import AppView
    from tusk.sandbox.graphql_cost import Measure


class Resolver:
    def __init__(self, app: AppView, token: Token, measured: Measure | None = None) -> None:
        self.app = app
        self.world: World = app.world
        self.token = token
        self.measured = measured
        self.shapes = Shapes(app.world, app.base)

    def resolve_field(self, parent: Any, info: Any, **args: Any) -> Any:
        name = info.field_name
        if isinstance(parent, dict):
            if name in parent:
                value = parent[name]
                return value(**args) if callable(value) else value
            if name == "__typename":
                return parent.get("__typename")
        self.app.note("sandbox-unimplemented", f"{info.parent_type.name}.{name}")
        return None

    # -- roots

    def query_root(self) -> dict[str, Any]:
        return {
            "viewer": lambda: self.user(self.token.user),
            "user": lambda login: self.user(login) if self.world.user(login) else None,
            "repository": lambda owner, name, followRenames=True: self.repository_by_name(
                owner, name
            ),
            "rateLimit": self.rate_limit,
        }

    def rate_limit(self, dryRun: bool = False) -> dict[str, Any]:
        """This call's cost and the budget left after it (graphql_cost has the rules)."""
        from tusk.sandbox.ratelimit import headers

        values = headers(self.world, self.token.name, "graphql")
        reset = datetime.fromtimestamp(int(values["x-ratelimit-reset"]), UTC)
        return {
            "cost": self.measured.cost if self.measured else 1,
            "limit": int(values["x-ratelimit-limit"]),
            "remaining": int(values["x-ratelimit-remaining"]),
            "used": int(values["x-ratelimit-used"]),
            "resetAt": iso(reset),
            "nodeCount": self.measured.nodes if self.measured else 0,
        }

    def mutation_root(self) -> dict[str, Any]:
        from tusk.sandbox import graphql_issues

        return {
            "addDiscussionComment": lambda input: graphql_discussions.add_discussion_comment(
                self, input
            ),
            "deleteDiscussionComment": lambda input: graphql_discussions.delete_discussion_comment(
                self, input
            ),
            "addReaction": lambda input: graphql_reactions.add_reaction(self, input),
            "deleteIssue": lambda input: graphql_issues.delete_issue(self, input),
            "transferIssue": lambda input: graphql_issues.transfer_issue(self, input),
        }

    # -- actors

    def user(self, login: str) -> dict[str, Any]:
        user = self.world.user(login)
        assert user is not None
        typename = "Bot" if user.type == "Bot" else "User"
        return {
            "__typename": typename,
            "id": node_id(typename, user.id),
            "databaseId": user.id,
            "login": user.login,
            "name": user.name,
            "email": user.email or "",
            "url": f"{self.app.base}/{user.login}",
            "avatarUrl": lambda size=None: f"{self.app.base}/avatars/{user.login}",
            "repositories": lambda **a: connection(
                self._filter_repos(user.login, a), a, self.repository
            ),
            "repository": lambda name, followRenames=True: self.repository_by_name(
                user.login, name
            ),
            "repositoryDiscussionComments": lambda **a: connection(
                list(self._discussion_comments_by(user.login, a.get("repositoryId"))),
                a,
                lambda found: graphql_discussions.comment_node(self, *found),
            ),
        }

    def _discussion_comments_by(
        self, login: str, repository_id: str | None
    ) -> Iterator[tuple[Repo, Discussion, DiscussionComment]]:
        """Discussion comments and replies ``login`` wrote, oldest first, in repositories the
        caller can see (all of them, or the one ``repositoryId`` names)."""
        found = []
        for repo in self.world.repos.values():
            if repository_id is not None and node_id("Repository", repo.id) != repository_id:
                continue
            if not self.visible(repo):
                continue
            for discussion in repo.discussions.values():
                for comment in discussion.comments:
                    for item in (comment, *comment.replies):
                        if item.author.lower() == login.lower():
                            found.append((repo, discussion, item))
        yield from sorted(found, key=lambda f: (f[2].created_at, f[2].id))

    def _filter_repos(self, login: str, args: dict[str, Any]) -> list[Repo]:
        # GitHub's default ownerAffiliations is [OWNER, COLLABORATOR].
        affiliations = set(args.get("ownerAffiliations") or ["OWNER", "COLLABORATOR"])
        repos = []
        for repo in self.world.repos.values():
            owner = repo.owner.lower() == login.lower()
            collaborator = login.lower() in {c.lower() for c in repo.collaborators}
            if not self.visible(repo):
                continue
            if (owner and "OWNER" in affiliations) or (
                collaborator and "COLLABORATOR" in affiliations
            ):
                repos.append(repo)
        if args.get("isFork") is not None:
            repos = [r for r in repos if (r.fork_of is not None) == args["isFork"]]
        if args.get("privacy"):
            repos = [r for r in repos if r.private == (args["privacy"] == "PRIVATE")]
        order = args.get("orderBy") or {}
        field = {
            "CREATED_AT": "created_at",
            "UPDATED_AT": "updated_at",
            "PUSHED_AT": "pushed_at",
        }.get(order.get("field", ""))
        if field:
            return sorted(
                repos, key=lambda r: getattr(r, field), reverse=order.get("direction") == "DESC"
            )
        return sorted(repos, key=lambda r: r.full_name.lower())

    def actor(self, login: str) -> dict[str, Any] | None:
        return self.user(login) if self.world.user(login) else None

    def visible(self, repo: Repo) -> bool:
        if not self.world.can_see(repo, self.token.user):
            return False
        return not repo.private or "repo" in self.token.scopes

    # -- repositories

    def repository_by_name(self, owner: str, name: str) -> dict[str, Any] | None:
        repo = self.world.repo(owner, name)
        if repo is None or not self.visible(repo):
            raise SandboxError(
                404, f"Could not resolve to a Repository with the name '{owner}/{name}'."
            )
        return self.repository(repo)

    def repository(self, repo: Repo) -> dict[str, Any]:
        heads = self.world.git.branches(repo.full_name) if self.world.git else []
        parent = self.world.repos.get((repo.fork_of or "").lower())
        permission = self.world.permission(repo, self.token.user).upper()
        return {
            "__typename": "Repository",
            "id": node_id("Repository", repo.id),
            "databaseId": repo.id,
            "name": repo.name,
            "nameWithOwner": repo.full_name,
            "owner": self.actor(repo.owner),
            "description": repo.description,
            "url": f"{self.app.base}/{repo.full_name}",
            "isPrivate": repo.private,
            "visibility": "PRIVATE" if repo.private else "PUBLIC",
            "isFork": repo.fork_of is not None,
            "isArchived": repo.archived,
            "hasDiscussionsEnabled": repo.has_discussions,
            "hasIssuesEnabled": True,
            "createdAt": iso(repo.created_at),
            "updatedAt": iso(repo.updated_at),
            "pushedAt": iso(repo.pushed_at),
            "forkCount": len(self.world.forks_of(repo)),
            "stargazerCount": 0,
            "viewerPermission": "READ" if permission == "NONE" else permission,
            "parent": self.repository(parent)
            if parent is not None and self.visible(parent)
            else None,
            "defaultBranchRef": next(
                (self.ref(repo, h) for h in heads if h.name == repo.default_branch), None
            ),
            "refs": lambda refPrefix, first=None, after=None, last=None, before=None, **_: (
                connection(
                    [h for h in heads] if refPrefix == "refs/heads/" else [],
                    {"first": first, "after": after, "last": last, "before": before},
                    lambda h: self.ref(repo, h),
                )
            ),
            "ref": lambda qualifiedName: next(
                (
                    self.ref(repo, h)
                    for h in heads
                    if qualifiedName in (h.name, f"refs/heads/{h.name}")
                ),
                None,
            ),
            "labels": lambda **a: connection(list(repo.labels.values()), a, self.label),
            "issue": lambda number: self._numbered(repo, number, "issue"),
            "pullRequest": lambda number: self._numbered(repo, number, "pull"),
            "issueOrPullRequest": lambda number: self._numbered(repo, number, "any"),
            "issues": lambda **a: connection(
                self._issues(repo, a, pulls=False), a, lambda i: self.issue(repo, i)
            ),
            "pullRequests": lambda **a: connection(
                self._issues(repo, a, pulls=True), a, lambda i: self.pull(repo, i)
            ),
            "discussion": lambda number: graphql_discussions.discussion_by_number(
                self, repo, number
            ),
            "discussions": lambda **a: connection(
                sorted(repo.discussions.values(), key=lambda d: d.number, reverse=True),
                a,
                lambda d: graphql_discussions.discussion_node(self, repo, d),
            ),
        }

    def ref(self, repo: Repo, head: Any) -> dict[str, Any]:
        commit = {
            "__typename": "Commit",
            "id": node_id("Commit", int(head.sha[:8], 16)),
            "oid": head.sha,
            "abbreviatedOid": head.sha[:7],
            "message": head.message,
            "messageHeadline": head.message,
            "committedDate": head.date,
            "authoredDate": head.date,
            "url": f"{self.app.base}/{repo.full_name}/commit/{head.sha}",
        }
        return {
            "__typename": "Ref",
            "id": node_id("Ref", zlib.crc32(f"{repo.full_name}:{head.name}".encode())),
            "name": head.name,
            "prefix": "refs/heads/",
            "target": commit,
        }

    def label(self, label: Any) -> dict[str, Any]:
        return {
            "__typename": "Label",
            "id": node_id("Label", label.id),
            "name": label.name,
            "color": label.color,
            "description": label.description,
        }

    def _numbered(self, repo: Repo, number: int, kind: str) -> dict[str, Any] | None:
        issue = repo.issues.get(number)
        wanted = {"issue": "Issue", "pull": "PullRequest"}.get(kind)
        if (
            issue is None
            or (wanted == "Issue" and issue.pull)
            or (wanted == "PullRequest" and not issue.pull)
        ):
            name = {"issue": "Issue", "pull": "PullRequest", "any": "issue or pull request"}[kind]
            raise SandboxError(404, f"Could not resolve to an {name} with the number of {number}.")
        return self.pull(repo, issue) if issue.pull else self.issue(repo, issue)

    def _issues(self, repo: Repo, args: dict[str, Any], *, pulls: bool) -> list[Issue]:
        states = args.get("states")
        labels = args.get("labels")
        items = [i for i in repo.issues.values() if (i.pull is not None) == pulls]
        if states:
            items = [
                i
                for i in items
                if i.state.upper() in states or (i.pull and i.pull.merged and "MERGED" in states)
            ]
        if labels:
            items = [i for i in items if set(labels) & set(i.labels)]
        return sorted(items, key=lambda i: i.number)

    # -- issues and pull requests

    def _content(self, repo: Repo, issue: Issue, typename: str) -> dict[str, Any]:
        html = (
            f"{self.app.base}/{repo.full_name}/{'pull' if issue.pull else 'issues'}/{issue.number}"
        )
        participants = {issue.author, *(c.author for c in issue.comments)}
        return {
            "__typename": typename,
            "id": node_id(typename, issue.id),
            "databaseId": issue.id,
            "number": issue.number,
            "title": issue.title,
            "body": issue.body or "",
            "bodyText": issue.body or "",
            "url": html,
            "resourcePath": html.removeprefix(self.app.base),
            "author": self.actor(issue.author),
            "authorAssociation": self.shapes.association(repo, issue.author),
            "createdAt": iso(issue.created_at),
            "updatedAt": iso(issue.updated_at),
            "lastEditedAt": iso(issue.body_edited_at),
            "closedAt": iso(issue.closed_at),
            "closed": issue.state == "closed",
            "locked": issue.locked,
            "repository": lambda: self.repository(repo),
            "labels": lambda **a: connection(
                [repo.labels[n.lower()] for n in issue.labels if n.lower() in repo.labels],
                a,
                self.label,
            ),
            "assignees": lambda **a: connection(issue.assignees, a, self.actor),
            "participants": lambda **a: connection(sorted(participants), a, self.actor),
            "milestone": self.milestone(repo, issue.milestone) if issue.milestone else None,
            "comments": lambda **a: connection(
                issue.comments, a, lambda c: self.issue_comment(repo, issue, c)
            ),
            "timelineItems": lambda **a: connection([], a, lambda x: x),
            "reactionGroups": lambda: reaction_groups(self, issue.reactions),
        }

    def milestone(self, repo: Repo, title: str) -> dict[str, Any]:
        shape = self.shapes.milestone(repo, title)
        return {
            "__typename": "Milestone",
            "id": shape["node_id"],
            "number": shape["number"],
            "title": title,
            "description": None,
            "dueOn": None,
            "state": "OPEN",
            "closed": False,
            "url": shape["html_url"],
        }

    def issue(self, repo: Repo, issue: Issue) -> dict[str, Any]:
        shape = self._content(repo, issue, "Issue")
        reason = (issue.state_reason or "").upper() or None
        shape.update(
            {
                "state": issue.state.upper(),
                "stateReason": lambda enableDuplicate=False: (
                    "NOT_PLANNED" if reason == "DUPLICATE" and not enableDuplicate else reason
                ),
                "closedByPullRequestsReferences": lambda **a: connection(
                    self._closing_pulls(repo, issue), a, lambda i: self.pull(repo, i)
                ),
            }
        )
        return shape

    def _closing_pulls(self, repo: Repo, issue: Issue) -> list[Issue]:
        from tusk.sandbox.world import closes_issue

        return [p for p in repo.issues.values() if p.pull and closes_issue(p.body, issue.number)]

    def issue_comment(self, repo: Repo, issue: Issue, comment: Comment) -> dict[str, Any]:
        kind = "pull" if issue.pull else "issues"
        return {
            "__typename": "IssueComment",
            "id": node_id("IssueComment", comment.id),
            "databaseId": comment.id,
            "body": comment.body,
            "bodyText": comment.body,
            "author": self.actor(comment.author),
            "authorAssociation": self.shapes.association(repo, comment.author),
            "createdAt": iso(comment.created_at),
            "updatedAt": iso(comment.updated_at),
            "lastEditedAt": iso(comment.updated_at)
            if comment.updated_at != comment.created_at
            else None,
            "isMinimized": False,
            "minimizedReason": None,
            "url": f"{self.app.base}/{repo.full_name}/{kind}/{issue.number}"
            f"#issuecomment-{comment.id}",
            "reactionGroups": lambda: reaction_groups(self, comment.reactions),
        }

    def pull(self, repo: Repo, issue: Issue) -> dict[str, Any]:
        assert issue.pull is not None
        pull = issue.pull
        shape = self._content(repo, issue, "PullRequest")
        head_repo = self.world.repos.get(pull.head_repo.lower()) if pull.head_repo else None
        head_sha = self.shapes.sha(head_repo, pull.head_ref) if head_repo else "0" * 40
        files = self.shapes.pull_files(repo, issue)
        threads = [c for c in pull.review_comments if c.in_reply_to is None]
        state = "MERGED" if pull.merged else issue.state.upper()
        shape.update(
            {
                "state": state,
                "merged": pull.merged,
                "mergedAt": iso(pull.merged_at),
                "isDraft": pull.draft,
                "baseRefName": pull.base_ref,
                "headRefName": pull.head_ref,
                "baseRefOid": self.shapes.sha(repo, pull.base_ref),
                "headRefOid": head_sha,
                "headRepository": self.repository(head_repo)
                if head_repo and self.visible(head_repo)
                else None,
                "headRepositoryOwner": self.actor(head_repo.owner) if head_repo else None,
                "baseRepository": lambda: self.repository(repo),
                "isCrossRepository": head_repo is not repo,
                "mergeable": "MERGEABLE" if issue.state == "open" else "UNKNOWN",
                "reviewDecision": None,
                "additions": sum(f.additions for f in files),
                "deletions": sum(f.deletions for f in files),
                "changedFiles": len(files),
                "files": lambda **a: connection(
                    files,
                    a,
                    lambda f: {
                        "__typename": "PullRequestChangedFile",
                        "path": f.filename,
                        "additions": f.additions,
                        "deletions": f.deletions,
                        "changeType": {
                            "added": "ADDED",
                            "removed": "DELETED",
                            "renamed": "RENAMED",
                        }.get(f.status, "MODIFIED"),
                    },
                ),
                "commits": lambda **a: connection(
                    [head_sha] if files else [],
                    a,
                    lambda sha: {
                        "__typename": "PullRequestCommit",
                        "commit": {"__typename": "Commit", "oid": sha},
                    },
                ),
                "reviews": lambda **a: connection(
                    [r for r in pull.reviews if not a.get("states") or r.state in a["states"]],
                    a,
                    lambda r: self.review(repo, issue, r),
                ),
                "latestReviews": lambda **a: connection(
                    list({r.author: r for r in pull.reviews}.values()),
                    a,
                    lambda r: self.review(repo, issue, r),
                ),
                "reviewThreads": lambda **a: connection(
                    threads, a, lambda c: self.review_thread(repo, issue, c)
                ),
                "reviewRequests": lambda **a: connection([], a, lambda x: x),
                "closingIssuesReferences": lambda **a: connection(
                    [
                        i
                        for i in repo.issues.values()
                        if i.pull is None and _closes(issue.body, i.number)
                    ],
                    a,
                    lambda i: self.issue(repo, i),
                ),
            }
        )
        return shape

    def review(self, repo: Repo, issue: Issue, review: Review) -> dict[str, Any]:
        assert issue.pull is not None
        comments = [c for c in issue.pull.review_comments if c.review_id == review.id]
        return {
            "__typename": "PullRequestReview",
            "id": node_id("PullRequestReview", review.id),
            "databaseId": review.id,
            "author": self.actor(review.author),
            "authorAssociation": self.shapes.association(repo, review.author),
            "body": review.body,
            "state": review.state,
            "submittedAt": iso(review.submitted_at),
            "createdAt": iso(review.submitted_at),
            "updatedAt": iso(review.submitted_at),
            "url": f"{self.app.base}/{repo.full_name}/pull/{issue.number}"
            f"#pullrequestreview-{review.id}",
            "comments": lambda **a: connection(
                comments, a, lambda c: self.review_comment(repo, issue, c)
            ),
            "reactionGroups": lambda: reaction_groups(self, review.reactions),
        }

    def review_comment(self, repo: Repo, issue: Issue, comment: ReviewComment) -> dict[str, Any]:
        return {
            "__typename": "PullRequestReviewComment",
            "id": node_id("PullRequestReviewComment", comment.id),
            "databaseId": comment.id,
            "author": self.actor(comment.author),
            "authorAssociation": self.shapes.association(repo, comment.author),
            "body": comment.body,
            "path": comment.path,
            "line": comment.line,
            "originalLine": comment.line,
            "diffHunk": f"@@ -1 +1 @@ {comment.path}",
            "createdAt": iso(comment.created_at),
            "updatedAt": iso(comment.updated_at),
            "url": f"{self.app.base}/{repo.full_name}/pull/{issue.number}#discussion_r{comment.id}",
            "replyTo": None,
            "pullRequestReview": None,
            "reactionGroups": lambda: reaction_groups(self, comment.reactions),
        }

    def review_thread(self, repo: Repo, issue: Issue, first: ReviewComment) -> dict[str, Any]:
        assert issue.pull is not None
        chain = [first] + [c for c in issue.pull.review_comments if c.in_reply_to == first.id]
        return {
            "__typename": "PullRequestReviewThread",
            "id": node_id("PullRequestReviewThread", first.id),
            "isResolved": False,
            "isOutdated": False,
            "isCollapsed": False,
            "path": first.path,
            "line": first.line,
            "originalLine": first.line,
            "diffSide": first.side,
            "comments": lambda **a: connection(
                chain, a, lambda c: self.review_comment(repo, issue, c)
            ),
        }


def _closes(body: str | None, number: int) -> bool:
    from tusk.sandbox.world import closes_issue

    return closes_issue(body, number)
