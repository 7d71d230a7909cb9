"""GitHub's JSON shapes for the sandbox's users, repositories and branches, and the
node ids every shape carries: the base of ``tusk.sandbox.shapes.Shapes``."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from tusk.sandbox.world import PUSH_PERMISSIONS, World
from tusk.sandbox.world_clock import iso
from tusk.sandbox.world_records import Repo

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


def node_id(kind: str, number: int) -> str:
    return base64.b64encode(f"{kind}:{number}".encode()).decode().rstrip("=")


@dataclass(frozen=True)
class RepoShapes:
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

    def small_repo(self, repo: Repo) -> dict[str, Any]:
        """The small repository GitHub nests in invitations, commit statuses and
        notification threads: names, owner and URLs, no dates, counts or permissions
        (recorded: @octokit/fixtures add-and-remove-repository-collaborator,
        create-status)."""
        url = self.repo_url(repo)
        shape: dict[str, Any] = {
            "id": repo.id,
            "node_id": node_id("Repository", repo.id),
            "name": repo.name,
            "full_name": repo.full_name,
            "private": repo.private,
            "owner": self.user(repo.owner),
            "html_url": f"{self.base}/{repo.full_name}",
            "description": repo.description,
            "fork": repo.fork_of is not None,
            "url": url,
        }
        for key in REPO_LINKS:
            shape[f"{key}_url"] = (
                f"{url}/{key.replace('_', '/') if key.startswith('git_') else key}"
            )
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
