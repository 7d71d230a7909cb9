"""Read tools: what the agent may look at, on the read-only token, throttled (M6).

Each returns compact JSON holding the fields an agent needs, not GitHub's
whole payload: fewer tokens, and no URLs the agent could mistake for APIs.
Every text from GitHub goes through ``tusk.neutralise`` first, the same
function ``context.md`` is built with: prose loses its hidden HTML comments,
prose and code show invisible characters as ``⟦U+…⟧``, one-line fields cannot
break a line, and an item by an untrusted author carries ``flags`` saying so.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from tusk.mcp_server.read_scope import ReadScope, repo_of_api_url
from tusk.mcp_server.runtime import Runtime, tool

from tusk.forks import find_fork
from tusk.github import Gateway
from tusk.neutralise import Trust, neutralise, one_line

READ = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=True
)
PER_PAGE = 100
DIFF_CHUNK = 60_000
FILE_CHUNK = 100_000


def _user(data: Any) -> str | None:
    return data.get("login") if isinstance(data, Mapping) else None


def _line(value: Any) -> Any:
    """A one-line field, neutralised; non-text values (None, numbers) pass through."""
    return one_line(value) if isinstance(value, str) else value


def _code(value: Any) -> Any:
    return neutralise(value, code=True).text if isinstance(value, str) else value


def prose(
    item: Mapping[str, Any],
    trust: Trust,
    *,
    text_key: str = "body",
    author: str | None = None,
    line: bool = False,
) -> dict[str, Any]:
    """An item's author, its neutralised text and, when there is anything to say, its flags."""
    login = author if author is not None else _user(item.get("user"))
    cleaned = neutralise(
        item.get(text_key) if isinstance(item.get(text_key), str) else None,
        trusted=trust.trusted(login, item.get("author_association")),
    )
    text = " ".join(cleaned.text.split()) if line else cleaned.text
    out: dict[str, Any] = {"author": login, text_key: text}
    if cleaned.flags:
        out["flags"] = list(cleaned.flags)
    return out


def slim_issue(issue: Mapping[str, Any], trust: Trust) -> dict[str, Any]:
    return {
        "number": issue.get("number"),
        "title": _line(issue.get("title")),
        "state": issue.get("state"),
        "state_reason": issue.get("state_reason"),
        "labels": [
            _line(label.get("name"))
            for label in issue.get("labels") or []
            if isinstance(label, Mapping)
        ],
        "assignees": [_user(a) for a in issue.get("assignees") or []],
        "is_pull_request": "pull_request" in issue,
        "comments": issue.get("comments"),
        "created_at": issue.get("created_at"),
        "updated_at": issue.get("updated_at"),
        "url": issue.get("html_url"),
        **prose(issue, trust),
    }


def slim_comment(comment: Mapping[str, Any], trust: Trust) -> dict[str, Any]:
    return {
        "id": comment.get("id"),
        "created_at": comment.get("created_at"),
        "updated_at": comment.get("updated_at"),
        "url": comment.get("html_url"),
        **prose(comment, trust),
    }


def _page(
    gateway: Gateway, path: str, page: int, params: Mapping[str, Any] | None = None
) -> tuple[Any, bool]:
    response = gateway.request(
        "GET", path, params={**(params or {}), "per_page": PER_PAGE, "page": page}
    )
    return response.body, "next" in response.links


def get_issue(
    gateway: Gateway, trust: Trust, repo: str, number: int, comments_page: int
) -> dict[str, Any]:
    issue = gateway.get(f"/repos/{repo}/issues/{number}")
    comments, more = _page(gateway, f"/repos/{repo}/issues/{number}/comments", comments_page)
    return {
        "issue": slim_issue(issue, trust),
        "comments_page": comments_page,
        "comments": [slim_comment(c, trust) for c in comments],
        "more_comments": more,
    }


def get_pull_request(
    gateway: Gateway, trust: Trust, repo: str, number: int, page: int
) -> dict[str, Any]:
    pr = gateway.get(f"/repos/{repo}/pulls/{number}")
    reviews, more_reviews = _page(gateway, f"/repos/{repo}/pulls/{number}/reviews", page)
    review_comments, more_comments = _page(gateway, f"/repos/{repo}/pulls/{number}/comments", page)
    return {
        "pull_request": {
            "number": pr.get("number"),
            "title": _line(pr.get("title")),
            "state": pr.get("state"),
            "merged": pr.get("merged"),
            "draft": pr.get("draft"),
            "head": {
                "label": _line(pr["head"].get("label")),
                "ref": _line(pr["head"].get("ref")),
                "sha": pr["head"].get("sha"),
            },
            "base": {
                "label": _line(pr["base"].get("label")),
                "ref": _line(pr["base"].get("ref")),
                "sha": pr["base"].get("sha"),
            },
            "url": pr.get("html_url"),
            "changed_files": pr.get("changed_files"),
            **prose(pr, trust),
        },
        "page": page,
        "reviews": [
            {
                "id": r.get("id"),
                "state": r.get("state"),
                "submitted_at": r.get("submitted_at"),
                **prose(r, trust),
            }
            for r in reviews
        ],
        "review_comments": [
            {
                **slim_comment(c, trust),
                "review_id": c.get("pull_request_review_id"),
                "path": _line(c.get("path")),
                "line": c.get("line"),
                "in_reply_to_id": c.get("in_reply_to_id"),
                "diff_hunk": _code(c.get("diff_hunk")),
            }
            for c in review_comments
        ],
        "more": more_reviews or more_comments,
        "note": "conversation comments: use get_issue with the same number",
    }


def get_pull_request_files(gateway: Gateway, repo: str, number: int, page: int) -> dict[str, Any]:
    files, more = _page(gateway, f"/repos/{repo}/pulls/{number}/files", page)
    return {
        "page": page,
        "files": [
            {
                "filename": _line(f.get("filename")),
                "status": f.get("status"),
                "additions": f.get("additions"),
                "deletions": f.get("deletions"),
                "patch": _code(f.get("patch")),
            }
            for f in files
        ],
        "more_files": more,
    }


def chunk(text: str, offset: int, size: int) -> dict[str, Any]:
    part = text[offset : offset + size]
    end = offset + len(part)
    return {
        "total_chars": len(text),
        "offset": offset,
        "next_offset": end if end < len(text) else None,
        "text": part,
    }


def get_pull_request_diff(gateway: Gateway, repo: str, number: int, offset: int) -> dict[str, Any]:
    diff = gateway.get_text(f"/repos/{repo}/pulls/{number}", accept="application/vnd.github.diff")
    return chunk(_code(diff), offset, DIFF_CHUNK)


DISCUSSION_QUERY = """
query($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    discussion(number: $number) {
      number title body url createdAt authorAssociation
      author { login }
      category { name }
      comments(first: 50, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes {
          id body url createdAt authorAssociation
          author { login }
          replies(first: 50) {
            nodes { id body url createdAt authorAssociation author { login } }
          }
        }
      }
    }
  }
}
"""


def _discussion_node(node: Mapping[str, Any], trust: Trust) -> dict[str, Any]:
    """A discussion, comment or reply as GraphQL gave it, its text neutralised."""
    out = {k: v for k, v in node.items() if k not in ("author", "authorAssociation", "body")}
    out.update(
        prose(
            {"body": node.get("body"), "author_association": node.get("authorAssociation")},
            trust,
            author=_user(node.get("author")) or "",
        )
    )
    if "title" in out:
        out["title"] = _line(out["title"])
    if isinstance(out.get("category"), Mapping):
        out["category"] = {"name": _line(out["category"].get("name"))}
    for key in ("comments", "replies"):
        if isinstance(node.get(key), Mapping):
            out[key] = {
                **node[key],
                "nodes": [_discussion_node(n, trust) for n in node[key].get("nodes") or []],
            }
    return out


def get_discussion(
    gateway: Gateway, trust: Trust, repo: str, number: int, after: str | None
) -> dict[str, Any]:
    owner, name = repo.split("/", 1)
    data = gateway.graphql(
        DISCUSSION_QUERY, {"owner": owner, "name": name, "number": number, "after": after}
    )
    discussion = (data.get("repository") or {}).get("discussion")
    if discussion is None:
        return {"error": f"no discussion #{number} in {repo}"}
    return {"discussion": _discussion_node(discussion, trust)}


def get_file_contents(
    gateway: Gateway, repo: str, path: str, ref: str | None, offset: int
) -> dict[str, Any]:
    params = {"ref": ref} if ref else None
    data = gateway.get(f"/repos/{repo}/contents/{quote(path.lstrip('/'))}", params=params)
    if isinstance(data, list):
        return {
            "directory": path,
            "entries": [
                {"name": _line(e.get("name")), "type": e.get("type"), "path": _line(e.get("path"))}
                for e in data
            ],
        }
    content = data.get("content") or ""
    raw = base64.b64decode(content) if data.get("encoding") == "base64" else content.encode()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return {"path": path, "size": data.get("size"), "binary": True}
    return {"path": path, "sha": data.get("sha"), **chunk(_code(text), offset, FILE_CHUNK)}


def list_branches(gateway: Gateway, repo: str, page: int) -> dict[str, Any]:
    branches, more = _page(gateway, f"/repos/{repo}/branches", page)
    return {
        "page": page,
        "branches": [
            {
                "name": _line(b.get("name")),
                "sha": (b.get("commit") or {}).get("sha"),
                "protected": b.get("protected"),
            }
            for b in branches
        ],
        "more_branches": more,
    }


def slim_repo(data: Mapping[str, Any]) -> dict[str, Any]:
    parent = data.get("parent") or {}
    return {
        "full_name": data.get("full_name"),
        "description": _line(data.get("description")),
        "private": data.get("private"),
        "fork": data.get("fork"),
        "parent": parent.get("full_name") if parent else None,
        "default_branch": data.get("default_branch"),
        "archived": data.get("archived"),
        "open_issues_count": data.get("open_issues_count"),
        "pushed_at": data.get("pushed_at"),
        "url": data.get("html_url"),
    }


def get_repository(gateway: Gateway, repo: str) -> dict[str, Any]:
    return slim_repo(gateway.get(f"/repos/{repo}"))


def get_my_fork(gateway: Gateway, bot: str, repo: str) -> dict[str, Any]:
    fork = find_fork(gateway, bot, repo)  # by its parent, whatever its name
    if fork is None:
        return {"fork": None, "note": f"{bot} has no fork of {repo} yet; push_branch creates it"}
    branches = list_branches(gateway, fork["full_name"], 1)
    return {"fork": slim_repo(fork), **branches}


def search_issues(gateway: Gateway, scope: ReadScope, query: str, page: int) -> dict[str, Any]:
    """A search over the run's repositories (or public ones, when allowed).

    ``scope.search_query`` refuses queries that reach elsewhere; the results are
    filtered again, since a query is only as narrow as GitHub's parser makes it.
    """
    sent, public = scope.search_query(query)
    data = gateway.get("/search/issues", params={"q": sent, "per_page": 30, "page": page})
    shown = []
    for item in data.get("items") or []:
        repo = repo_of_api_url(item.get("repository_url"))
        if repo is not None and scope.allows_result(repo, public_search=public):
            shown.append((repo, item))
    left_out = len(data.get("items") or []) - len(shown)
    return {
        "total_count": data.get("total_count"),
        "page": page,
        **({"query_sent": sent} if sent != query else {}),
        **({"left_out_outside_scope": left_out} if left_out else {}),
        "items": [
            {
                "repo": repo,
                "number": i.get("number"),
                "state": i.get("state"),
                "is_pull_request": "pull_request" in i,
                "url": i.get("html_url"),
                **prose(i, scope.trust_in(repo), text_key="title", line=True),
            }
            for repo, i in shown
        ],
    }


def get_check_status(gateway: Gateway, repo: str, ref: str) -> dict[str, Any]:
    ref_path = quote(ref, safe="")
    checks = gateway.get(
        f"/repos/{repo}/commits/{ref_path}/check-runs", params={"per_page": PER_PAGE}
    )
    status = gateway.get(f"/repos/{repo}/commits/{ref_path}/status")
    return {
        "ref": ref,
        "combined_state": status.get("state"),
        "statuses": [
            {
                "context": _line(s.get("context")),
                "state": s.get("state"),
                "description": _line(s.get("description")),
            }
            for s in status.get("statuses") or []
        ],
        "check_runs": [
            {
                "name": _line(c.get("name")),
                "status": c.get("status"),
                "conclusion": c.get("conclusion"),
            }
            for c in checks.get("check_runs") or []
        ],
    }


def register(server: MCPServer, runtime: Runtime) -> None:
    """Add the read tools to ``server``."""
    gw = runtime.read_gateway
    bot = runtime.config.bot
    scope = runtime.scope

    @tool(server, name="get_issue", annotations=READ)
    async def _get_issue(repo: str, number: int, comments_page: int = 1) -> str:
        """Read an issue (or a pull request's conversation) with its comments.

        repo is "owner/name". Comments come 100 per page, oldest first; when
        more_comments is true, call again with comments_page + 1.
        """
        args = {"repo": repo, "number": number, "comments_page": comments_page}
        return await runtime.read(
            "get_issue",
            args,
            lambda: get_issue(gw, scope.trust_in(repo), repo, number, comments_page),
        )

    @tool(server, name="get_pull_request", annotations=READ)
    async def _get_pull_request(repo: str, number: int, page: int = 1) -> str:
        """Read a pull request: head/base branches, state, body, its reviews and review comments.

        Reviews and review comments come 100 per page. For the conversation
        comments use get_issue with the same number; for the changes use
        get_pull_request_files or get_pull_request_diff.
        """
        args = {"repo": repo, "number": number, "page": page}
        return await runtime.read(
            "get_pull_request",
            args,
            lambda: get_pull_request(gw, scope.trust_in(repo), repo, number, page),
        )

    @tool(server, name="get_pull_request_files", annotations=READ)
    async def _get_pull_request_files(repo: str, number: int, page: int = 1) -> str:
        """List the files a pull request changes, with their patches, 100 per page."""
        args = {"repo": repo, "number": number, "page": page}
        return await runtime.read(
            "get_pull_request_files", args, lambda: get_pull_request_files(gw, repo, number, page)
        )

    @tool(server, name="get_pull_request_diff", annotations=READ)
    async def _get_pull_request_diff(repo: str, number: int, offset: int = 0) -> str:
        """Read a pull request's unified diff, 60,000 characters at a time.

        When next_offset is not null, call again with offset=next_offset for the rest.
        """
        args = {"repo": repo, "number": number, "offset": offset}
        return await runtime.read(
            "get_pull_request_diff", args, lambda: get_pull_request_diff(gw, repo, number, offset)
        )

    @tool(server, name="get_discussion", annotations=READ)
    async def _get_discussion(repo: str, number: int, after: str | None = None) -> str:
        """Read a discussion with its comments and their replies (50 comments per call).

        When comments.pageInfo.hasNextPage is true, call again with after=endCursor.
        """
        args = {"repo": repo, "number": number, "after": after}
        return await runtime.read(
            "get_discussion",
            args,
            lambda: get_discussion(gw, scope.trust_in(repo), repo, number, after),
        )

    @tool(server, name="get_file_contents", annotations=READ)
    async def _get_file_contents(
        repo: str, path: str, ref: str | None = None, offset: int = 0
    ) -> str:
        """Read a file (or list a directory) of a repository on GitHub, at ref or default branch.

        Text comes 100,000 characters at a time; use offset=next_offset for more.
        Your local checkout is usually faster for the repository you work on.
        """
        args = {"repo": repo, "path": path, "ref": ref, "offset": offset}
        return await runtime.read(
            "get_file_contents", args, lambda: get_file_contents(gw, repo, path, ref, offset)
        )

    @tool(server, name="list_branches", annotations=READ)
    async def _list_branches(repo: str, page: int = 1) -> str:
        """List a repository's branches with their latest commit, 100 per page."""
        args = {"repo": repo, "page": page}
        return await runtime.read("list_branches", args, lambda: list_branches(gw, repo, page))

    @tool(server, name="get_repository", annotations=READ)
    async def _get_repository(repo: str) -> str:
        """Read a repository's metadata: description, default branch, fork parent, visibility."""
        return await runtime.read(
            "get_repository", {"repo": repo}, lambda: get_repository(gw, repo)
        )

    @tool(
        server,
        name="get_my_fork",
        annotations=READ,
        description=(
            f"Show your account's ({bot}) fork of repo, with its branches, or say there is none "
            "yet. Pull requests you open come from this fork; push_branch creates it when needed."
        ),
    )
    async def _get_my_fork(repo: str) -> str:
        return await runtime.read("get_my_fork", {"repo": repo}, lambda: get_my_fork(gw, bot, repo))

    @tool(server, name="search_issues", annotations=READ)
    async def _search_issues(query: str, page: int = 1) -> str:
        """Search issues and pull requests with GitHub's search syntax, 30 per page.

        Name the repositories with repo: qualifiers, e.g. "repo:owner/name is:open
        label:bug crash"; only this run's repositories can be searched.
        """
        args = {"query": query, "page": page}
        return await runtime.read(
            "search_issues", args, lambda: search_issues(gw, scope, query, page)
        )

    @tool(server, name="get_check_status", annotations=READ)
    async def _get_check_status(repo: str, ref: str) -> str:
        """Show the CI state of a commit, branch or tag: check runs and commit statuses."""
        args = {"repo": repo, "ref": ref}
        return await runtime.read("get_check_status", args, lambda: get_check_status(gw, repo, ref))
