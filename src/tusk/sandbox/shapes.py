"""GitHub's JSON shapes for the sandbox's records.

Each function spells out the fields that carry meaning; the server then fills
whatever else the documented schema requires (``spec.OpenApi.complete``) and
validates the result, so a wrong type here is caught, not hidden.
"""

from __future__ import annotations

from typing import Any

from tusk.sandbox.shapes_issues import IssueShapes
from tusk.sandbox.shapes_repos import node_id
from tusk.sandbox.world_clock import iso
from tusk.sandbox.world_records import Artifact, Issue, Repo, Review, ReviewComment, Thread

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


class Shapes(IssueShapes):
    """Every shape the server answers with: users and repositories (``shapes_repos``),
    issues (``shapes_issues``), and here pull requests, notifications and artifacts."""

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
            "repository": self.small_repo(repo),
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
