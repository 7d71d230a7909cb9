"""GitHub's JSON shapes for the sandbox's issues: author associations, labels,
reactions, issues, milestones and comments (on top of users and repositories)."""

from __future__ import annotations

import zlib
from typing import Any
from urllib.parse import quote

from tusk.sandbox.shapes_repos import RepoShapes, node_id
from tusk.sandbox.world_clock import iso
from tusk.sandbox.world_records import Comment, Issue, Label, Reaction, Repo

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


class IssueShapes(RepoShapes):
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
            "url": f"{self.repo_url(repo)}/labels/{quote(label.name)}",
            "name": label.name,
            "description": label.description,
            "color": label.color,
            "default": label.default,
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
        known = [repo.labels.get(n.lower()) for n in issue.labels]
        return [self.label(repo, label) for label in known if label is not None]

    def issue(self, repo: Repo, issue: Issue, *, single: bool = False) -> dict[str, Any]:
        """An issue as GitHub answers it. ``closed_by`` only in the answers about one issue
        (get, create, update): listings and search items lack it (recorded:
        @octokit/fixtures paginate-issues, search-issues)."""
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
            "author_association": self.association(repo, issue.author),
            "reactions": self.reactions(f"{url}/reactions", issue.reactions),
            "timeline_url": f"{url}/timeline",
            # Tusk acts as a user, never as a GitHub App.
            "performed_via_github_app": None,
        }
        if single:
            shape["closed_by"] = self.user(issue.closed_by) if issue.closed_by else None
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
