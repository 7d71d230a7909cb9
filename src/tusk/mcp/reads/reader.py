"""Read tools: what the agent may look at, on the read-only token (M6).

Each tool is a plain function of a ``Reader`` and its arguments (a pydantic
model whose fields are the tool's parameters) returning compact data: the
fields an agent needs, not GitHub's whole payload (fewer tokens, and no URLs
the agent could mistake for APIs), every text neutralised (``read_shapes``).
The runtime runs them behind the scope check and the throttle.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from pydantic import BaseModel

from tusk.github.forks import find_fork
from tusk.github.gateway import Gateway
from tusk.mcp.reads.scope import ReadScope, repo_of_api_url
from tusk.mcp.reads.shapes import (
    code_field,
    discussion_node,
    line_field,
    prose,
    slim_comment,
    slim_issue,
    slim_repo,
)

PER_PAGE = 100
DIFF_CHUNK = 60_000
FILE_CHUNK = 100_000

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


@dataclass(frozen=True)
class Reader:
    """What every read tool reads with: the read token's gateway and the run's scope."""

    gateway: Gateway
    scope: ReadScope
    bot: str


class GetIssue(BaseModel):
    repo: str
    number: int
    comments_page: int = 1


class GetPullRequest(BaseModel):
    repo: str
    number: int
    page: int = 1


class GetPullRequestDiff(BaseModel):
    repo: str
    number: int
    offset: int = 0


class GetDiscussion(BaseModel):
    repo: str
    number: int
    after: str | None = None


class GetFileContents(BaseModel):
    repo: str
    path: str
    ref: str | None = None
    offset: int = 0


class ListBranches(BaseModel):
    repo: str
    page: int = 1


class RepoOnly(BaseModel):
    repo: str


class SearchIssues(BaseModel):
    query: str
    page: int = 1


class GetCheckStatus(BaseModel):
    repo: str
    ref: str


def _page(
    gateway: Gateway, path: str, page: int, params: Mapping[str, Any] | None = None
) -> tuple[Any, bool]:
    response = gateway.request(
        "GET", path, params={**(params or {}), "per_page": PER_PAGE, "page": page}
    )
    return response.body, "next" in response.links


def chunk(text: str, offset: int, size: int) -> dict[str, Any]:
    part = text[offset : offset + size]
    end = offset + len(part)
    return {
        "total_chars": len(text),
        "offset": offset,
        "next_offset": end if end < len(text) else None,
        "text": part,
    }


def get_issue(r: Reader, a: GetIssue) -> dict[str, Any]:
    trust = r.scope.trust_in(a.repo)
    issue = r.gateway.get(f"/repos/{a.repo}/issues/{a.number}")
    comments, more = _page(
        r.gateway, f"/repos/{a.repo}/issues/{a.number}/comments", a.comments_page
    )
    return {
        "issue": slim_issue(issue, trust),
        "comments_page": a.comments_page,
        "comments": [slim_comment(c, trust) for c in comments],
        "more_comments": more,
    }


def _branch_end(end: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "label": line_field(end.get("label")),
        "ref": line_field(end.get("ref")),
        "sha": end.get("sha"),
    }


def get_pull_request(r: Reader, a: GetPullRequest) -> dict[str, Any]:
    trust = r.scope.trust_in(a.repo)
    base = f"/repos/{a.repo}/pulls/{a.number}"
    pr = r.gateway.get(base)
    reviews, more_reviews = _page(r.gateway, f"{base}/reviews", a.page)
    review_comments, more_comments = _page(r.gateway, f"{base}/comments", a.page)
    return {
        "pull_request": {
            "number": pr.get("number"),
            "title": line_field(pr.get("title")),
            "state": pr.get("state"),
            "merged": pr.get("merged"),
            "draft": pr.get("draft"),
            "head": _branch_end(pr["head"]),
            "base": _branch_end(pr["base"]),
            "url": pr.get("html_url"),
            "changed_files": pr.get("changed_files"),
            **prose(pr, trust),
        },
        "page": a.page,
        "reviews": [
            {
                "id": rv.get("id"),
                "state": rv.get("state"),
                "submitted_at": rv.get("submitted_at"),
                **prose(rv, trust),
            }
            for rv in reviews
        ],
        "review_comments": [
            {
                **slim_comment(c, trust),
                "review_id": c.get("pull_request_review_id"),
                "path": line_field(c.get("path")),
                "line": c.get("line"),
                "in_reply_to_id": c.get("in_reply_to_id"),
                "diff_hunk": code_field(c.get("diff_hunk")),
            }
            for c in review_comments
        ],
        "more": more_reviews or more_comments,
        "note": "conversation comments: use get_issue with the same number",
    }


def get_pull_request_files(r: Reader, a: GetPullRequest) -> dict[str, Any]:
    files, more = _page(r.gateway, f"/repos/{a.repo}/pulls/{a.number}/files", a.page)
    return {
        "page": a.page,
        "files": [
            {
                "filename": line_field(f.get("filename")),
                "status": f.get("status"),
                "additions": f.get("additions"),
                "deletions": f.get("deletions"),
                "patch": code_field(f.get("patch")),
            }
            for f in files
        ],
        "more_files": more,
    }


def get_pull_request_diff(r: Reader, a: GetPullRequestDiff) -> dict[str, Any]:
    diff = r.gateway.get_text(
        f"/repos/{a.repo}/pulls/{a.number}", accept="application/vnd.github.diff"
    )
    return chunk(code_field(diff), a.offset, DIFF_CHUNK)


def get_discussion(r: Reader, a: GetDiscussion) -> dict[str, Any]:
    owner, name = a.repo.split("/", 1)
    data = r.gateway.graphql(
        DISCUSSION_QUERY, {"owner": owner, "name": name, "number": a.number, "after": a.after}
    )
    discussion = (data.get("repository") or {}).get("discussion")
    if discussion is None:
        return {"error": f"no discussion #{a.number} in {a.repo}"}
    return {"discussion": discussion_node(discussion, r.scope.trust_in(a.repo))}


def get_file_contents(r: Reader, a: GetFileContents) -> dict[str, Any]:
    params = {"ref": a.ref} if a.ref else None
    data = r.gateway.get(f"/repos/{a.repo}/contents/{quote(a.path.lstrip('/'))}", params=params)
    if isinstance(data, list):
        return {
            "directory": a.path,
            "entries": [
                {
                    "name": line_field(e.get("name")),
                    "type": e.get("type"),
                    "path": line_field(e.get("path")),
                }
                for e in data
            ],
        }
    content = data.get("content") or ""
    raw = base64.b64decode(content) if data.get("encoding") == "base64" else content.encode()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return {"path": a.path, "size": data.get("size"), "binary": True}
    return {"path": a.path, "sha": data.get("sha"), **chunk(code_field(text), a.offset, FILE_CHUNK)}


def branches_of(gateway: Gateway, repo: str, page: int) -> dict[str, Any]:
    branches, more = _page(gateway, f"/repos/{repo}/branches", page)
    return {
        "page": page,
        "branches": [
            {
                "name": line_field(b.get("name")),
                "sha": (b.get("commit") or {}).get("sha"),
                "protected": b.get("protected"),
            }
            for b in branches
        ],
        "more_branches": more,
    }


def list_branches(r: Reader, a: ListBranches) -> dict[str, Any]:
    return branches_of(r.gateway, a.repo, a.page)


def get_repository(r: Reader, a: RepoOnly) -> dict[str, Any]:
    return slim_repo(r.gateway.get(f"/repos/{a.repo}"))


def get_my_fork(r: Reader, a: RepoOnly) -> dict[str, Any]:
    fork = find_fork(r.gateway, r.bot, a.repo)  # by its parent, whatever its name
    if fork is None:
        return {
            "fork": None,
            "note": f"{r.bot} has no fork of {a.repo} yet; push_branch creates it",
        }
    return {"fork": slim_repo(fork), **branches_of(r.gateway, fork["full_name"], 1)}


def search_issues(r: Reader, a: SearchIssues) -> dict[str, Any]:
    """A search over the run's repositories (or public ones, when allowed).

    ``scope.search_query`` refuses queries that reach elsewhere; the results are
    filtered again, since a query is only as narrow as GitHub's parser makes it.
    """
    scope = r.scope
    sent, public = scope.search_query(a.query)
    data = r.gateway.get("/search/issues", params={"q": sent, "per_page": 30, "page": a.page})
    shown = []
    for item in data.get("items") or []:
        repo = repo_of_api_url(item.get("repository_url"))
        if repo is not None and scope.allows_result(repo, public_search=public):
            shown.append((repo, item))
    left_out = len(data.get("items") or []) - len(shown)
    return {
        "total_count": data.get("total_count"),
        "page": a.page,
        **({"query_sent": sent} if sent != a.query else {}),
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


def get_check_status(r: Reader, a: GetCheckStatus) -> dict[str, Any]:
    ref_path = quote(a.ref, safe="")
    commit = f"/repos/{a.repo}/commits/{ref_path}"
    checks = r.gateway.get(f"{commit}/check-runs", params={"per_page": PER_PAGE})
    status = r.gateway.get(f"{commit}/status")
    return {
        "ref": a.ref,
        "combined_state": status.get("state"),
        "statuses": [
            {
                "context": line_field(s.get("context")),
                "state": s.get("state"),
                "description": line_field(s.get("description")),
            }
            for s in status.get("statuses") or []
        ],
        "check_runs": [
            {
                "name": line_field(c.get("name")),
                "status": c.get("status"),
                "conclusion": c.get("conclusion"),
            }
            for c in checks.get("check_runs") or []
        ],
    }
