"""The REST plumbing: a request as handlers see it, replies, the operation registry,
pagination and the access checks every handler shares.

Handlers are registered by GitHub's operationId (``issues/get``), so routing
is the OpenAPI match itself: a path the description does not know can never
reach a handler.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from tusk.sandbox import repo_ids
from tusk.sandbox.shapes import Shapes
from tusk.sandbox.world import SandboxError, World
from tusk.sandbox.world_records import Issue, Repo, Token

Handler = Callable[["Call"], "Reply"]
HANDLERS: dict[str, Handler] = {}


def handles(*operation_ids: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        for operation_id in operation_ids:
            HANDLERS[operation_id] = handler
        return handler

    return register


@dataclass
class Reply:
    status: int
    body: Any = None  # JSON-able, or bytes/str for other media types
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json; charset=utf-8"


@dataclass
class Call:
    method: str
    path: str
    params: dict[str, str]
    query: dict[str, list[str]]
    body: Any
    token: Token | None
    headers: dict[str, str]
    world: World
    shapes: Shapes
    base: str

    @property
    def login(self) -> str | None:
        return self.token.user if self.token else None

    def arg(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[-1] if values else default

    def int_param(self, name: str) -> int:
        try:
            return int(self.params[name])
        except (KeyError, ValueError):
            raise SandboxError(404, "Not Found") from None

    def field(self, name: str, default: Any = None) -> Any:
        return self.body.get(name, default) if isinstance(self.body, dict) else default

    # -- access

    def require_user(self) -> str:
        if self.login is None:
            raise SandboxError(401, "Requires authentication")
        if self.token is not None and self.token.repository is not None:
            # GET /user and the like: an installation token is no user.
            raise SandboxError(403, "Resource not accessible by integration")
        return self.login

    def require_scope(self, *any_of: str) -> None:
        if self.token is not None and not set(any_of) & set(self.token.scopes):
            raise SandboxError(
                403,
                f"This API operation needs one of the scopes {', '.join(any_of)}; "
                f"the token has {', '.join(self.token.scopes) or 'none'}",
            )

    def repo(self, *, owner_key: str = "owner", repo_key: str = "repo") -> Repo:
        repo = self.world.repo(self.params[owner_key], self.params[repo_key])
        if repo is None:
            self.redirect_renamed(f"{self.params[owner_key]}/{self.params[repo_key]}")
        bound = self.token.repository if self.token is not None else None
        if bound is not None:  # a GITHUB_TOKEN sees its own repository and public ones
            if repo is None or (repo.private and repo.full_name.lower() != bound.lower()):
                raise SandboxError(404, "Not Found")
        elif repo is None or not self.world.can_see(repo, self.login):
            raise SandboxError(404, "Not Found")
        if repo.pending_reads > 0:
            repo.pending_reads -= 1
            raise SandboxError(404, "Not Found")
        if repo.private and bound is None:  # an installation token has no scopes
            self.require_scope("repo")
        return repo

    def redirect_renamed(self, former: str) -> None:
        """GitHub's answer to a renamed or transferred repository's old name: 301 for a
        read, 307 for any other method, to the same path under ``/repositories/{id}``
        (recorded: @octokit/fixtures rename-repository)."""
        repo_id = self.world.renamed.get(former.lower())
        target = repo_ids.by_id(self.world, repo_id) if repo_id is not None else None
        if target is None:
            return
        if not self.world.can_see(target, self.login):
            raise SandboxError(404, "Not Found")
        moved = repo_ids.id_path(self.world, f"/repos/{target.full_name}")
        rest = self.path.split("/", 4)[4:]  # "", "repos", owner, name, rest
        url = self.base + moved + ("/" + rest[0] if rest else "")
        status = 301 if self.method in ("GET", "HEAD") else 307
        raise SandboxError(status, "Moved Permanently", url=url)

    def writable_repo(self) -> Repo:
        """A repository the caller writes content to (issues, comments): read access suffices."""
        repo = self.repo()
        self.require_user()
        self.require_scope("repo", "public_repo")
        if repo.archived:
            raise SandboxError(403, "Repository was archived so is read-only.")
        return repo

    def push_repo(self) -> Repo:
        if self.token is not None and self.token.repository is not None:
            # A GITHUB_TOKEN writes its own repository's contents, with contents: write.
            repo = self.repo()
            own = repo.full_name.lower() == self.token.repository.lower()
            if not own or self.token.permissions.get("contents") != "write":
                raise SandboxError(403, "Resource not accessible by integration")
            return repo
        repo = self.writable_repo()
        if not self.world.can_push(repo, self.login):
            raise SandboxError(403, "Resource not accessible by personal access token")
        return repo

    def issue(self, repo: Repo, key: str = "issue_number") -> Issue:
        number = self.int_param(key)
        issue = repo.issues.get(number)
        if issue is None and number in repo.gone:
            moved = repo.gone[number]
            if moved is None:  # GitHub answers a deleted issue's URL with 410
                raise SandboxError(410, "This issue was deleted")
            # GitHub's Location names the new repository by its id.
            target = self.world.repos.get(moved[0].lower())
            base = f"{self.base}/repositories/{target.id}" if target else moved[0]
            raise SandboxError(301, "Moved Permanently", url=f"{base}/issues/{moved[1]}")
        if issue is None:
            raise SandboxError(404, "Not Found")
        return issue

    def pull(self, repo: Repo) -> Issue:
        issue = repo.issues.get(self.int_param("pull_number"))
        if issue is None or issue.pull is None:
            raise SandboxError(404, "Not Found")
        return issue


def paginate(
    call: Call, items: list[Any], *, default: int = 30, maximum: int = 100
) -> tuple[list[Any], dict[str, str]]:
    """One page of ``items`` and the ``Link`` header GitHub would send with it."""
    try:
        if call.world.page_size is not None:
            maximum = min(maximum, call.world.page_size)
        per_page = min(max(int(call.arg("per_page", str(default)) or default), 1), maximum)
        page = max(int(call.arg("page", "1") or 1), 1)
    except ValueError:
        raise SandboxError(422, "Validation Failed") from None
    last = max((len(items) + per_page - 1) // per_page, 1)
    chunk = items[(page - 1) * per_page : page * per_page]
    links = []
    # GitHub's pages of a repository's lists live under /repositories/{id}, and its rels
    # come as prev, next, last, first (recorded: @octokit/fixtures paginate-issues).
    path = repo_ids.id_path(call.world, call.path)

    def link(number: int, rel: str) -> str:
        query = {k: v[-1] for k, v in call.query.items()}
        query.update({"per_page": str(per_page), "page": str(number)})
        return f'<{call.base}{path}?{urlencode(query)}>; rel="{rel}"'

    if page > 1:
        links.append(link(page - 1, "prev"))
    if page < last:
        links += [link(page + 1, "next"), link(last, "last")]
    if page > 1:
        links.append(link(1, "first"))
    return chunk, ({"Link": ", ".join(links)} if links else {})


def listing(call: Call, items: list[Any], **kwargs: Any) -> Reply:
    chunk, headers = paginate(call, items, **kwargs)
    return Reply(200, chunk, headers)


def validation_failed(
    resource: str, field_name: str, code: str = "invalid", message: str | None = None
) -> SandboxError:
    error: dict[str, Any] = {"resource": resource, "field": field_name, "code": code}
    if message:
        error["message"] = message
    return SandboxError(422, "Validation Failed", errors=[error])
