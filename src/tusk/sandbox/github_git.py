"""Git smart HTTP on the local GitHub (``/{owner}/{name}.git``): who may fetch and
push as on GitHub (visibility, scopes, push access, archived repositories), then
``git http-backend`` over the bare repositories of ``gitstore``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from tusk.sandbox.outcomes import Outcome
from tusk.sandbox.world_records import Token

if TYPE_CHECKING:
    from tusk.sandbox.app_view import AppView

GIT_PATH = re.compile(r"^/([^/]+)/([^/]+?)\.git(/.*)?$")


def git_route(
    app: AppView,
    method: str,
    path: str,
    query: str,
    headers: Mapping[str, str],
    body: bytes,
    token: Token | None,
    auth_problem: str | None,
) -> Outcome:
    found = GIT_PATH.match(path)
    assert found is not None
    owner, name, rest = found.group(1), found.group(2), found.group(3) or ""
    challenge = {"WWW-Authenticate": 'Basic realm="GitHub"'}
    if auth_problem:
        return Outcome(
            401, {**challenge, "Content-Type": "text/plain"}, b"Invalid username or token.\n"
        )
    pushing = "git-receive-pack" in rest or "service=git-receive-pack" in query
    with app.lock:
        repo = app.world.repo(owner, name)
        login = token.user if token else None
        visible = repo is not None and app.world.can_see(repo, login)
        if repo is not None and repo.private and token is not None and "repo" not in token.scopes:
            visible = False
        if not visible and token is None:
            return Outcome(
                401, {**challenge, "Content-Type": "text/plain"}, b"Authentication required\n"
            )
        if not visible or repo is None or repo.pending_reads > 0:
            return Outcome(404, {"Content-Type": "text/plain"}, b"Repository not found.\n")
        if repo.pending_git > 0:  # a new fork whose git objects are still being copied
            repo.pending_git -= 1
            return Outcome(404, {"Content-Type": "text/plain"}, b"Repository not found.\n")
        if pushing:
            if token is None:
                return Outcome(
                    401,
                    {**challenge, "Content-Type": "text/plain"},
                    b"Authentication required\n",
                )
            allowed = (
                not token.read_only
                and {"repo", "public_repo"} & set(token.scopes)
                and app.world.can_push(repo, login)
                and not repo.archived
            )
            if not allowed:
                text = f"Permission to {repo.full_name}.git denied to {login}.\n"
                return Outcome(403, {"Content-Type": "text/plain"}, text.encode())
        full_name = repo.full_name
    extra = {"TUSK_SANDBOX_WORKFLOW_SCOPE": "1" if token and "workflow" in token.scopes else "0"}
    if headers.get("content-encoding"):
        extra["HTTP_CONTENT_ENCODING"] = headers["content-encoding"]
    if headers.get("git-protocol"):
        extra["HTTP_GIT_PROTOCOL"] = headers["git-protocol"]
    owner_dir, name_dir = full_name.lower().split("/")
    status, out_headers, out_body = app.git.http_backend(
        method=method,
        path_info=f"/{owner_dir}/{name_dir}.git{rest}",
        query=query,
        content_type=headers.get("content-type", ""),
        body=body,
        remote_user=login,
        extra_env=extra,
    )
    if pushing and method == "POST" and status == 200:
        with app.lock:
            pushed = app.world.repo(owner, name)
            if pushed is not None:
                pushed.pushed_at = app.world.clock.tick()
                pushed.updated_at = pushed.pushed_at
    return Outcome(status, dict(out_headers), out_body)
