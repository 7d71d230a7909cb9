"""GitHub's JSON shapes for the sandbox's records.

Each function spells out the fields that carry meaning; the server then fills
whatever else the documented schema requires (``spec.OpenApi.complete``) and
validates the result, so a wrong type here is caught, not hidden.
"""

from __future__ import annotations

import base64
import zlib
from dataclasses import dataclass
from typing import Any

from tusk.sandbox.world import (
    PUSH_PERMISSIONS,
    Artifact,
    Comment,
    Issue,
    Label,
    Reaction,
    Repo,
    Review,
    ReviewComment,
    Thread,
    World,
    iso,
)

REACTION_KEYS = {
    "+1": "+1",
    "-1": "-1",
    "laugh": "laugh",
    "confused": "confused",
    "heart": "heart",
    "hooray": "hooray",
    "rocket": "rocket",
    "eyes": "eyes",
}


# The repository object's ``<key>_url`` links (``git_*`` ones are paths under ``git/``).
REPO_LINKS = (
    "archive",
    "assignees",
    "blobs",
    "branches",
    "collaborators",
    "comments",
    "commits",
    "compare",
    "contents",
    "contributors",
    "deployments",
    "downloads",
    "events",
    "forks",
    "git_commits",
    "git_refs",
    "git_tags",
    "hooks",
    "issue_comment",
    "issue_events",
    "issues",
    "keys",
    "labels",
    "languages",
    "merges",
    "milestones",
    "notifications",
    "pulls",
    "releases",
    "stargazers",
    "statuses",
    "subscribers",
    "subscription",
    "tags",
    "teams",
    "trees",
)


# A pull request repeats these fields of its issue.
PULL_FIELDS_OF_ISSUE = (
    "id",
    "number",
    "state",
    "title",
    "body",
    "user",
    "labels",
    "assignee",
    "assignees",
    "milestone",
    "locked",
    "active_lock_reason",
    "created_at",
    "updated_at",
    "closed_at",
    "author_association",
)


def node_id(kind: str, number: int) -> str:
    return base64.b64encode(f"{kind}:{number}".encode()).decode().rstrip("=")


@dataclass(frozen=True)
class Shapes:
    world: World
    base: str

    # -- users

    def user(self, login: str) -> dict[str, Any]:
        user = self.world.user(login)
        user_id = user.id if user else 0
        login = user.login if user else login
        url = f"{self.base}/users/{login}"
        return {
            "login": login,
            "id": user_id,
            "node_id": node_id("User", user_id),
            "avatar_url": f"{self.base}/avatars/{login}",
            "gravatar_id": "",
            "url": url,
            "html_url": f"{self.base}/{login}",
            "followers_url": f"{url}/followers",
            "following_url": f"{url}/following{{/other_user}}",
            "gists_url": f"{url}/gists{{/gist_id}}",
            "starred_url": f"{url}/starred{{/owner}}{{/repo}}",
            "subscriptions_url": f"{url}/subscriptions",
            "organizations_url": f"{url}/orgs",
            "repos_url": f"{url}/repos",
            "events_url": f"{url}/events{{/privacy}}",
            "received_events_url": f"{url}/received_events",
            "type": user.type if user else "User",
            "user_view_type": "public",
            "site_admin": False,
        }

    def full_user(self, login: str, private: bool) -> dict[str, Any]:
        user = self.world.user(login)
        assert user is not None
        owned = [r for r in self.world.repos.values() if r.owner.lower() == user.login.lower()]
        shape = self.user(login)
        shape.update(
            {
                "name": user.name,
                "email": user.email,
                "company": None,
                "blog": "",
                "location": None,
                "hireable": None,
                "bio": None,
                "public_repos": sum(1 for r in owned if not r.private),
                "public_gists": 0,
                "followers": 0,
                "following": 0,
                "created_at": "2020-01-01T00:00:00Z",
                "updated_at": "2020-01-01T00:00:00Z",
            }
        )
        if private:
            shape.update(
                {
                    "user_view_type": "private",
                    "total_private_repos": sum(1 for r in owned if r.private),
                    "owned_private_repos": sum(1 for r in owned if r.private),
                    "private_gists": 0,
                    "disk_usage": 0,
                    "collaborators": 0,
                    "two_factor_authentication": True,
                }
            )
        return shape

    # -- repositories

    def repo_url(self, repo: Repo | str) -> str:
        name = repo.full_name if isinstance(repo, Repo) else repo
        return f"{self.base}/repos/{name}"

    def repo(self, repo: Repo, viewer: str | None, *, full: bool = True) -> dict[str, Any]:
        url = self.repo_url(repo)
        open_issues = sum(1 for i in repo.issues.values() if i.state == "open")
        forks = len(self.world.forks_of(repo))
        shape: dict[str, Any] = {
            "id": repo.id,
            "node_id": node_id("Repository", repo.id),
            "name": repo.name,
            "full_name": repo.full_name,
            "owner": self.user(repo.owner),
            "private": repo.private,
            "visibility": "private" if repo.private else "public",
            "html_url": f"{self.base}/{repo.full_name}",
            "description": repo.description,
            "fork": repo.fork_of is not None,
            "url": url,
            "clone_url": f"{self.base}/{repo.full_name}.git",
            "git_url": f"{self.base}/{repo.full_name}.git",
            "ssh_url": f"{self.base}/{repo.full_name}.git",
            "svn_url": f"{self.base}/{repo.full_name}",
            "mirror_url": None,
            "homepage": None,
            "language": None,
            "default_branch": repo.default_branch,
            "archived": repo.archived,
            "disabled": False,
            "has_issues": True,
            "has_projects": False,
            "has_wiki": False,
            "has_pages": False,
            "has_downloads": True,
            "has_discussions": repo.has_discussions,
            "is_template": False,
            "topics": [],
            "forks_count": forks,
            "forks": forks,
            "stargazers_count": 0,
            "watchers_count": 0,
            "watchers": 0,
            "open_issues_count": open_issues,
            "open_issues": open_issues,
            "size": 0,
            "pushed_at": iso(repo.pushed_at),
            "created_at": iso(repo.created_at),
            "updated_at": iso(repo.updated_at),
            "allow_forking": True,
            "web_commit_signoff_required": False,
            "license": None,
            "subscribers_count": 0,
            "network_count": 0,
            "permissions": self.repo_permissions(repo, viewer),
        }
        for key in REPO_LINKS:
            shape[f"{key}_url"] = (
                f"{url}/{key.replace('_', '/') if key.startswith('git_') else key}"
            )
        if full and repo.fork_of:
            parent = self.world.repos.get(repo.fork_of.lower())
            if parent is not None:
                shape["parent"] = self.repo(parent, viewer, full=False)
                root = parent
                while root.fork_of and root.fork_of.lower() in self.world.repos:
                    root = self.world.repos[root.fork_of.lower()]
                shape["source"] = self.repo(root, viewer, full=False)
        return shape

    def repo_permissions(self, repo: Repo, viewer: str | None) -> dict[str, bool]:
        """The viewer's rights as the repository object lists them."""
        permission = self.world.permission(repo, viewer)
        order = ["none", "read", "triage", "write", "maintain", "admin"]
        rank = order.index(permission)
        return {
            "admin": rank >= order.index("admin"),
            "maintain": rank >= order.index("maintain"),
            "push": permission in PUSH_PERMISSIONS,
            "triage": rank >= order.index("triage"),
            "pull": rank >= order.index("read"),
        }

    def branch_short(self, repo: Repo, name: str, sha: str) -> dict[str, Any]:
        return {
            "name": name,
            "commit": {"sha": sha, "url": f"{self.repo_url(repo)}/commits/{sha}"},
            "protected": name in repo.protected,
        }

    def branch_full(self, repo: Repo, head: Any) -> dict[str, Any]:
        url = self.repo_url(repo)
        author = (
            self.user(head.author) if self.world.user(head.author) else {}
        )  # GitHub: {} for unknown authors
        person = {
            "name": head.author,
            "email": f"{head.author}@users.noreply.github.com",
            "date": head.date,
        }
        protected = head.name in repo.protected
        return {
            "name": head.name,
            "commit": {
                "sha": head.sha,
                "node_id": node_id("Commit", int(head.sha[:8], 16)),
                "url": f"{url}/commits/{head.sha}",
                "html_url": f"{self.base}/{repo.full_name}/commit/{head.sha}",
                "comments_url": f"{url}/commits/{head.sha}/comments",
                "commit": {
                    "url": f"{url}/git/commits/{head.sha}",
                    "author": person,
                    "committer": person,
                    "message": head.message,
                    "comment_count": 0,
                    "tree": {"sha": head.sha, "url": f"{url}/git/trees/{head.sha}"},
                },
                "author": author,
                "committer": author,
                "parents": [],
            },
            "_links": {
                "html": f"{self.base}/{repo.full_name}/tree/{head.name}",
                "self": f"{url}/branches/{head.name}",
            },
            "protected": protected,
            "protection": {
                "enabled": protected,
                "required_status_checks": {"enforcement_level": "off", "contexts": []},
            },
            "protection_url": f"{url}/branches/{head.name}/protection",
        }

    # -- issues

    def association(self, repo: Repo, login: str) -> str:
        """GitHub's ``author_association`` (OpenAPI schema ``author-association``, GraphQL
        ``CommentAuthorAssociation``): OWNER "is the owner of the repository"; MEMBER "is
        a member of the organization that owns the repository", whatever its role;
        COLLABORATOR "has been invited to collaborate", with any role (read and triage
        too); CONTRIBUTOR "has previously committed to the repository"; else NONE."""
        name = login.lower()
        if name == repo.owner.lower():
            return "OWNER"
        owner = self.world.user(repo.owner)
        members = owner.members if owner is not None and owner.type == "Organization" else []
        if name in {m.lower() for m in members}:
            return "MEMBER"
        if name in {c.lower() for c in repo.collaborators}:
            return "COLLABORATOR"
        if name in {c.lower() for c in repo.contributors}:
            return "CONTRIBUTOR"
        return "NONE"

    def label(self, repo: Repo, label: Label) -> dict[str, Any]:
        return {
            "id": label.id,
            "node_id": node_id("Label", label.id),
            "url": f"{self.repo_url(repo)}/labels/{label.name}",
            "name": label.name,
            "description": label.description,
            "color": label.color,
            "default": False,
        }

    def reactions(self, url: str, reactions: list[Reaction]) -> dict[str, Any]:
        rollup: dict[str, Any] = {"url": url, "total_count": len(reactions)}
        for key in REACTION_KEYS:
            rollup[key] = sum(1 for r in reactions if r.content == key)
        return rollup

    def reaction(self, reaction: Reaction) -> dict[str, Any]:
        return {
            "id": reaction.id,
            "node_id": node_id("Reaction", reaction.id),
            "user": self.user(reaction.user),
            "content": reaction.content,
            "created_at": iso(reaction.created_at),
        }

    def issue_labels(self, repo: Repo, issue: Issue) -> list[dict[str, Any]]:
        """The issue's labels as GitHub shows them (names the repository no longer has drop)."""
        return [self.label(repo, repo.labels[n]) for n in issue.labels if n in repo.labels]

    def issue(self, repo: Repo, issue: Issue) -> dict[str, Any]:
        url = f"{self.repo_url(repo)}/issues/{issue.number}"
        kind = "pull" if issue.pull else "issues"
        labels = self.issue_labels(repo, issue)
        shape: dict[str, Any] = {
            "id": issue.id,
            "node_id": node_id("PullRequest" if issue.pull else "Issue", issue.id),
            "url": url,
            "repository_url": self.repo_url(repo),
            "labels_url": f"{url}/labels{{/name}}",
            "comments_url": f"{url}/comments",
            "events_url": f"{url}/events",
            "html_url": f"{self.base}/{repo.full_name}/{kind}/{issue.number}",
            "number": issue.number,
            "state": issue.state,
            "state_reason": issue.state_reason,
            "title": issue.title,
            "body": issue.body,
            "user": self.user(issue.author),
            "labels": labels,
            "assignee": self.user(issue.assignees[0]) if issue.assignees else None,
            "assignees": [self.user(a) for a in issue.assignees],
            "milestone": self.milestone(repo, issue.milestone) if issue.milestone else None,
            "locked": issue.locked,
            "active_lock_reason": None,
            "comments": len(issue.comments),
            "closed_at": iso(issue.closed_at),
            "created_at": iso(issue.created_at),
            "updated_at": iso(issue.updated_at),
            "closed_by": self.user(issue.closed_by) if issue.closed_by else None,
            "author_association": self.association(repo, issue.author),
            "reactions": self.reactions(f"{url}/reactions", issue.reactions),
            "timeline_url": f"{url}/timeline",
        }
        if issue.pull is not None:
            pull_url = f"{self.repo_url(repo)}/pulls/{issue.number}"
            html = f"{self.base}/{repo.full_name}/pull/{issue.number}"
            shape["pull_request"] = {
                "url": pull_url,
                "html_url": html,
                "diff_url": f"{html}.diff",
                "patch_url": f"{html}.patch",
                "merged_at": iso(issue.pull.merged_at),
            }
        return shape

    def milestone(self, repo: Repo, title: str) -> dict[str, Any]:
        number = zlib.crc32(title.encode()) % 1000 + 1  # stable across processes
        return {
            "url": f"{self.repo_url(repo)}/milestones/{number}",
            "html_url": f"{self.base}/{repo.full_name}/milestone/{number}",
            "labels_url": f"{self.repo_url(repo)}/milestones/{number}/labels",
            "id": number,
            "node_id": node_id("Milestone", number),
            "number": number,
            "state": "open",
            "title": title,
            "description": None,
            "creator": None,
            "open_issues": 0,
            "closed_issues": 0,
            "created_at": "2020-01-01T00:00:00Z",
            "updated_at": "2020-01-01T00:00:00Z",
            "closed_at": None,
            "due_on": None,
        }

    def comment(self, repo: Repo, issue: Issue, comment: Comment) -> dict[str, Any]:
        url = f"{self.repo_url(repo)}/issues/comments/{comment.id}"
        kind = "pull" if issue.pull else "issues"
        return {
            "id": comment.id,
            "node_id": node_id("IssueComment", comment.id),
            "url": url,
            "html_url": f"{self.base}/{repo.full_name}/{kind}/{issue.number}"
            f"#issuecomment-{comment.id}",
            "body": comment.body,
            "user": self.user(comment.author),
            "created_at": iso(comment.created_at),
            "updated_at": iso(comment.updated_at),
            "issue_url": f"{self.repo_url(repo)}/issues/{issue.number}",
            "author_association": self.association(repo, comment.author),
            "reactions": self.reactions(f"{url}/reactions", comment.reactions),
        }

    # -- pulls

    def pull(self, repo: Repo, issue: Issue, *, full: bool, viewer: str | None) -> dict[str, Any]:
        assert issue.pull is not None
        pull = issue.pull
        base_shape = self.issue(repo, issue)
        url = f"{self.repo_url(repo)}/pulls/{issue.number}"
        html = f"{self.base}/{repo.full_name}/pull/{issue.number}"
        head_repo = self.world.repos.get(pull.head_repo.lower()) if pull.head_repo else None
        head_sha = self.sha(head_repo, pull.head_ref) if head_repo else "0" * 40
        shape = {key: base_shape[key] for key in PULL_FIELDS_OF_ISSUE}
        shape.update(
            {
                "node_id": node_id("PullRequest", issue.id),
                "url": url,
                "html_url": html,
                "diff_url": f"{html}.diff",
                "patch_url": f"{html}.patch",
                "issue_url": f"{self.repo_url(repo)}/issues/{issue.number}",
                "commits_url": f"{url}/commits",
                "review_comments_url": f"{url}/comments",
                "review_comment_url": f"{self.repo_url(repo)}/pulls/comments{{/number}}",
                "comments_url": f"{self.repo_url(repo)}/issues/{issue.number}/comments",
                "statuses_url": f"{self.repo_url(repo)}/statuses/{head_sha}",
                "merged_at": iso(pull.merged_at),
                "merge_commit_sha": None,
                "draft": pull.draft,
                "requested_reviewers": [],
                "requested_teams": [],
                "head": {
                    "label": f"{head_repo.owner if head_repo else 'unknown'}:{pull.head_ref}",
                    "ref": pull.head_ref,
                    "sha": head_sha,
                    "user": self.user(head_repo.owner if head_repo else issue.author),
                    "repo": self.repo(head_repo, viewer, full=False) if head_repo else None,
                },
                "base": {
                    "label": f"{repo.owner}:{pull.base_ref}",
                    "ref": pull.base_ref,
                    "sha": self.sha(repo, pull.base_ref),
                    "user": self.user(repo.owner),
                    "repo": self.repo(repo, viewer, full=False),
                },
                "_links": self.pull_links(repo, issue.number, head_sha),
                "auto_merge": None,
            }
        )
        if full:
            shape.update(self.pull_details(repo, issue))
        return shape

    def pull_links(self, repo: Repo, number: int, head_sha: str) -> dict[str, Any]:
        """The pull request's hypermedia ``_links``."""
        url = f"{self.repo_url(repo)}/pulls/{number}"
        return {
            "self": {"href": url},
            "html": {"href": f"{self.base}/{repo.full_name}/pull/{number}"},
            "issue": {"href": f"{self.repo_url(repo)}/issues/{number}"},
            "comments": {"href": f"{self.repo_url(repo)}/issues/{number}/comments"},
            "review_comments": {"href": f"{url}/comments"},
            "review_comment": {"href": f"{self.repo_url(repo)}/pulls/comments{{/number}}"},
            "commits": {"href": f"{url}/commits"},
            "statuses": {"href": f"{self.repo_url(repo)}/statuses/{head_sha}"},
        }

    def pull_details(self, repo: Repo, issue: Issue) -> dict[str, Any]:
        """What only a single pull request's own URL answers: merge state and counts."""
        assert issue.pull is not None
        pull = issue.pull
        files = self.pull_files(repo, issue)
        return {
            "merged": pull.merged,
            "mergeable": None if pull.merged or issue.state == "closed" else True,
            "rebaseable": None,
            "mergeable_state": "clean" if issue.state == "open" else "unknown",
            "merged_by": None,
            "comments": len(issue.comments),
            "review_comments": len(pull.review_comments),
            "maintainer_can_modify": pull.maintainer_can_modify,
            "commits": 1 if files else 0,
            "additions": sum(f.additions for f in files),
            "deletions": sum(f.deletions for f in files),
            "changed_files": len(files),
        }

    def sha(self, repo: Repo, ref: str) -> str:
        if self.world.git is None:
            return "0" * 40
        head = self.world.git.branch(repo.full_name, ref)
        return head.sha if head else "0" * 40

    def pull_diff(self, repo: Repo, issue: Issue) -> tuple[str, list[Any]]:
        assert issue.pull is not None
        pull = issue.pull
        head_repo = self.world.repos.get(pull.head_repo.lower()) if pull.head_repo else None
        if self.world.git is None or head_repo is None:
            return "", []
        base_sha, head_sha = self.sha(repo, pull.base_ref), self.sha(head_repo, pull.head_ref)
        if set(base_sha) == {"0"} or set(head_sha) == {"0"}:
            return "", []
        diff: tuple[str, list[Any]] = self.world.git.diff(
            repo.full_name, base_sha, head_repo.full_name, head_sha
        )
        return diff

    def pull_files(self, repo: Repo, issue: Issue) -> list[Any]:
        return self.pull_diff(repo, issue)[1]

    def diff_entry(self, repo: Repo, change: Any, head_sha: str) -> dict[str, Any]:
        shape = {
            "sha": head_sha,
            "filename": change.filename,
            "status": change.status,
            "additions": change.additions,
            "deletions": change.deletions,
            "changes": change.additions + change.deletions,
            "blob_url": f"{self.base}/{repo.full_name}/blob/{head_sha}/{change.filename}",
            "raw_url": f"{self.base}/{repo.full_name}/raw/{head_sha}/{change.filename}",
            "contents_url": f"{self.repo_url(repo)}/contents/{change.filename}?ref={head_sha}",
            "patch": change.patch,
        }
        if change.previous_filename:
            shape["previous_filename"] = change.previous_filename
        return shape

    def review(self, repo: Repo, issue: Issue, review: Review) -> dict[str, Any]:
        html = f"{self.base}/{repo.full_name}/pull/{issue.number}#pullrequestreview-{review.id}"
        pull_url = f"{self.repo_url(repo)}/pulls/{issue.number}"
        return {
            "id": review.id,
            "node_id": node_id("PullRequestReview", review.id),
            "user": self.user(review.author),
            "body": review.body,
            "state": review.state,
            "html_url": html,
            "pull_request_url": pull_url,
            "_links": {"html": {"href": html}, "pull_request": {"href": pull_url}},
            "submitted_at": iso(review.submitted_at),
            "commit_id": review.commit_id
            or self.sha(repo, issue.pull.base_ref if issue.pull else ""),
            "author_association": self.association(repo, review.author),
        }

    def review_comment(self, repo: Repo, issue: Issue, comment: ReviewComment) -> dict[str, Any]:
        url = f"{self.repo_url(repo)}/pulls/comments/{comment.id}"
        html = f"{self.base}/{repo.full_name}/pull/{issue.number}#discussion_r{comment.id}"
        pull_url = f"{self.repo_url(repo)}/pulls/{issue.number}"
        shape: dict[str, Any] = {
            "url": url,
            "pull_request_review_id": comment.review_id,
            "id": comment.id,
            "node_id": node_id("PullRequestReviewComment", comment.id),
            "diff_hunk": f"@@ -1 +1 @@ {comment.path}",
            "path": comment.path,
            "position": comment.line,
            "original_position": comment.line,
            "line": comment.line,
            "original_line": comment.line,
            "side": comment.side,
            "commit_id": comment.commit_id or "0" * 40,
            "original_commit_id": comment.commit_id or "0" * 40,
            "user": self.user(comment.author),
            "body": comment.body,
            "created_at": iso(comment.created_at),
            "updated_at": iso(comment.updated_at),
            "html_url": html,
            "pull_request_url": pull_url,
            "author_association": self.association(repo, comment.author),
            "_links": {
                "self": {"href": url},
                "html": {"href": html},
                "pull_request": {"href": pull_url},
            },
            "reactions": self.reactions(f"{url}/reactions", comment.reactions),
        }
        if comment.in_reply_to is not None:
            shape["in_reply_to_id"] = comment.in_reply_to
        return shape

    # -- notifications

    def thread(self, thread: Thread) -> dict[str, Any]:
        repo = self.world.repos.get(thread.repo.lower())
        assert repo is not None
        title = ""
        subject_url: str | None
        latest: str | None
        if thread.kind == "Discussion":
            discussion = repo.discussions.get(thread.number)
            title = discussion.title if discussion else ""
            # Since late 2024 GitHub fills in a REST-style URL that answers 404 (REST has
            # no discussions; gitify-app/gitify#1582); before, both were null
            # (gitify-app/gitify#521). settings.discussion_subject_url picks the era.
            subject_url = latest = None
            if self.world.discussion_subject_url:
                subject_url = latest = f"{self.repo_url(repo)}/discussions/{thread.number}"
        else:
            issue = repo.issues.get(thread.number)
            title = issue.title if issue else ""
            kind = "pulls" if thread.kind == "PullRequest" else "issues"
            subject_url = f"{self.repo_url(repo)}/{kind}/{thread.number}"
            latest = subject_url
            if thread.latest_comment is not None:
                where, comment_id = thread.latest_comment
                latest = f"{self.repo_url(repo)}/{where}/comments/{comment_id}"
        url = f"{self.base}/notifications/threads/{thread.id}"
        return {
            "id": str(thread.id),
            "unread": thread.unread,
            "reason": thread.reason,
            "updated_at": iso(thread.updated_at),
            "last_read_at": iso(thread.last_read_at),
            "subject": {
                "title": title,
                "url": subject_url,
                "latest_comment_url": latest,
                "type": thread.kind,
            },
            "repository": self.repo(repo, thread.user, full=False),
            "url": url,
            "subscription_url": f"{url}/subscription",
        }

    # -- artifacts

    def artifact(self, repo: Repo, artifact: Artifact) -> dict[str, Any]:
        from tusk.sandbox.artifacts import digest

        url = f"{self.repo_url(repo)}/actions/artifacts/{artifact.id}"
        expired = artifact.expires_at <= self.world.clock.peek()
        return {
            "id": artifact.id,
            "node_id": node_id("Artifact", artifact.id),
            "name": artifact.name,
            "size_in_bytes": len(artifact.data),
            "url": url,
            "archive_download_url": f"{url}/zip",
            "expired": expired,
            "created_at": iso(artifact.created_at),
            "updated_at": iso(artifact.created_at),
            "expires_at": iso(artifact.expires_at),
            "digest": digest(artifact.data),
            "workflow_run": {
                "id": artifact.run_id,
                "repository_id": repo.id,
                "head_repository_id": repo.id,
                "head_branch": artifact.head_branch,
                "head_sha": "0" * 40,
            },
        }
