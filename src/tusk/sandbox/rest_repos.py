"""REST handlers: users, repositories, branches, forks, dispatches, artifacts, rate limit."""

from __future__ import annotations

import json
import re
from datetime import timedelta

from tusk.sandbox.rest import Call, Reply, handles, listing, validation_failed
from tusk.sandbox.world import SandboxError
from tusk.sandbox.world_clock import iso
from tusk.sandbox.world_records import Artifact, Dispatch, Repo

DISPATCH_PAYLOAD_LIMIT = 64 * 1024


@handles("users/get-authenticated")
def get_authenticated(call: Call) -> Reply:
    login = call.require_user()
    return Reply(200, call.shapes.full_user(login, private=True))


@handles("users/get-by-username")
def get_user(call: Call) -> Reply:
    user = call.world.user(call.params["username"])
    if user is None:
        raise SandboxError(404, "Not Found")
    return Reply(200, call.shapes.full_user(user.login, private=False))


def _sorted_repos(call: Call, repos: list[Repo]) -> list[Repo]:
    sort = call.arg("sort", "full_name")
    direction = call.arg("direction", "asc" if sort == "full_name" else "desc")
    key = {
        "created": lambda r: r.created_at,
        "updated": lambda r: r.updated_at,
        "pushed": lambda r: r.pushed_at,
    }.get(sort or "", lambda r: r.full_name.lower())
    return sorted(repos, key=key, reverse=direction == "desc")


@handles("repos/list-for-authenticated-user")
def list_my_repos(call: Call) -> Reply:
    login = call.require_user()
    affiliation = (call.arg("affiliation") or "owner,collaborator,organization_member").split(",")
    visibility = call.arg("visibility", "all")
    kind = call.arg("type")
    repos = []
    for repo in call.world.repos.values():
        owner = repo.owner.lower() == login.lower()
        collaborator = login.lower() in {c.lower() for c in repo.collaborators}
        if kind in ("owner",) and not owner:
            continue
        if not (
            (owner and "owner" in affiliation) or (collaborator and "collaborator" in affiliation)
        ):
            continue
        if visibility in ("public", "private") and repo.private != (visibility == "private"):
            continue
        if repo.private and call.token and "repo" not in call.token.scopes:
            continue
        repos.append(repo)
    return listing(
        call, [call.shapes.repo(r, login, full=False) for r in _sorted_repos(call, repos)]
    )


@handles("repos/list-for-user")
def list_user_repos(call: Call) -> Reply:
    user = call.world.user(call.params["username"])
    if user is None:
        raise SandboxError(404, "Not Found")
    kind = call.arg("type", "owner")
    repos = [
        r
        for r in call.world.repos.values()
        if (
            r.owner.lower() == user.login.lower()
            or (kind == "member" and user.login in r.collaborators)
        )
        and not r.private
    ]
    return listing(
        call, [call.shapes.repo(r, call.login, full=False) for r in _sorted_repos(call, repos)]
    )


@handles("repos/get")
def get_repo(call: Call) -> Reply:
    return Reply(200, call.shapes.repo(call.repo(), call.login))


# What the stand-in models of "Update a repository"; any other field is refused rather
# than answered 200 unchanged.
UPDATABLE = {"name", "description", "has_discussions", "archived"}


@handles("repos/update")
def update_repo(call: Call) -> Reply:
    """docs.github.com/rest/repos/repos#update-a-repository (admins). A new ``name``
    renames it: its old name then redirects to ``/repositories/{id}`` (recorded:
    @octokit/fixtures rename-repository)."""
    repo = call.repo()
    call.require_user()
    if call.world.permission(repo, call.login) != "admin":
        raise SandboxError(403, "Must have admin rights to Repository.")
    unmodelled = sorted(set(call.body) - UPDATABLE) if isinstance(call.body, dict) else []
    if unmodelled:
        raise SandboxError(501, f"the sandbox does not model {', '.join(unmodelled)} here")
    name = call.field("name")
    if name and name != repo.name:
        if call.world.repo(repo.owner, str(name)) is not None:
            raise validation_failed("Repository", "name", "custom", "name already exists")
        call.world.rename_repo(repo, str(name))
    if "description" in call.body:
        repo.description = call.field("description")
    if "has_discussions" in call.body:
        repo.has_discussions = bool(call.field("has_discussions"))
    if "archived" in call.body:
        repo.archived = bool(call.field("archived"))
    repo.updated_at = call.world.clock.tick()
    return Reply(200, call.shapes.repo(repo, call.login))


@handles("repos/delete")
def delete_repo(call: Call) -> Reply:
    repo = call.repo()
    call.require_user()
    call.require_scope("delete_repo")
    if call.world.permission(repo, call.login) != "admin":
        raise SandboxError(403, "Must have admin rights to Repository.")
    call.world.delete_repo(repo, call.world.clock.tick())
    return Reply(204)


@handles("repos/create-fork")
def create_fork(call: Call) -> Reply:
    source = call.repo()
    login = call.require_user()
    call.require_scope("repo", "public_repo")
    owner = call.field("organization") or login
    if call.world.user(owner) is None:
        raise SandboxError(404, "Not Found")
    for existing in call.world.forks_of(source):
        if existing.owner.lower() == owner.lower():
            return Reply(202, call.shapes.repo(existing, login))  # forking twice returns the fork
    name = call.field("name") or source.name
    if call.world.repo(owner, name) is not None:
        if call.field("name"):
            raise validation_failed(
                "Repository", "name", "already_exists", f"{owner}/{name} already exists"
            )
        # The owner already has an unrelated repository of that name: GitHub names the
        # fork name-1 (name-2, ...) and answers 202 with it (octokit/octokit.js#483,
        # cli/cli#5030).
        base, suffix = name, 1
        while call.world.repo(owner, f"{base}-{suffix}") is not None:
            suffix += 1
        name = f"{base}-{suffix}"
    moment = call.world.clock.tick()
    fork = Repo(
        owner=call.world.users[owner.lower()].login,
        name=name,
        id=call.world.new_id(),
        created_at=moment,
        updated_at=moment,
        pushed_at=source.pushed_at,
        private=source.private,
        default_branch=source.default_branch,
        description=source.description,
        fork_of=source.full_name,
        has_discussions=False,
    )
    fork.pending_reads = call.world.fork_ready_after_reads
    fork.pending_git = call.world.fork_git_ready_after_requests
    call.world.add_repo(fork)
    if call.world.git is not None:
        call.world.git.fork(source.full_name, fork.full_name)
        if call.field("default_branch_only"):
            for head in call.world.git.branches(fork.full_name):
                if head.name != fork.default_branch:
                    call.world.git.delete_branch(fork.full_name, head.name)
    return Reply(202, call.shapes.repo(fork, login))


@handles("repos/merge-upstream")
def merge_upstream(call: Call) -> Reply:
    fork = call.push_repo()
    branch = call.field("branch")
    if not fork.fork_of or call.world.git is None:
        raise validation_failed("Repository", "fork", "invalid", "This repository is not a fork")
    upstream = call.world.repos.get(fork.fork_of.lower())
    if upstream is None or call.world.git.branch(fork.full_name, branch) is None:
        raise validation_failed("Repository", "branch", "invalid", f"Branch {branch} not found")
    outcome = call.world.git.merge_upstream(upstream.full_name, fork.full_name, branch)
    if outcome == "conflict":
        raise SandboxError(409, "There are merge conflicts")
    if outcome == "fast-forward":
        fork.pushed_at = call.world.clock.tick()
    message = {
        "none": "This branch is not behind the upstream",
        "fast-forward": "Successfully fetched and fast-forwarded from upstream "
        f"{upstream.owner}:{branch}.",
    }[outcome]
    return Reply(
        200,
        {"message": message, "merge_type": outcome, "base_branch": f"{upstream.owner}:{branch}"},
    )


@handles("repos/list-branches")
def list_branches(call: Call) -> Reply:
    repo = call.repo()
    heads = call.world.git.branches(repo.full_name) if call.world.git else []
    protected = call.arg("protected")
    shapes = [
        call.shapes.branch_short(repo, h.name, h.sha)
        for h in heads
        if protected is None or (h.name in repo.protected) == (protected == "true")
    ]
    return listing(call, shapes)


@handles("repos/get-branch")
def get_branch(call: Call) -> Reply:
    repo = call.repo()
    head = call.world.git.branch(repo.full_name, call.params["branch"]) if call.world.git else None
    if head is None:
        raise SandboxError(404, "Branch not found")
    return Reply(200, call.shapes.branch_full(repo, head))


@handles("git/delete-ref")
def delete_ref(call: Call) -> Reply:
    """``DELETE /repos/{owner}/{repo}/git/refs/{ref}`` (``ref`` as ``heads/<branch>``):
    204, or 422 "Reference does not exist" (docs.github.com/en/rest/git/refs#delete-a-
    reference). Needs push access; undo deletes a run's branch on the bot's fork with it."""
    repo = call.repo()
    call.require_user()
    call.require_scope("repo", "public_repo")
    if not call.world.can_push(repo, call.login):
        raise SandboxError(403, "Resource not accessible by personal access token")
    ref = call.params["ref"]
    branch = ref.removeprefix("heads/") if ref.startswith("heads/") else None
    git = call.world.git
    if branch is None or git is None or git.branch(repo.full_name, branch) is None:
        raise SandboxError(422, "Reference does not exist")
    git.delete_branch(repo.full_name, branch)
    return Reply(204)


@handles("repos/get-branch-protection")
def get_branch_protection(call: Call) -> Reply:
    repo = call.repo()
    branch = call.params["branch"]
    if not call.world.can_push(repo, call.login):
        raise SandboxError(404, "Not Found")
    if branch not in repo.protected:
        raise SandboxError(404, "Branch not protected")
    rules = repo.protected[branch]
    url = f"{call.shapes.repo_url(repo)}/branches/{branch}/protection"
    shape = {"url": url, "enabled": True}
    reviews = rules.get("required_approving_review_count")
    if reviews is not None:
        shape["required_pull_request_reviews"] = {
            "url": f"{url}/required_pull_request_reviews",
            "required_approving_review_count": reviews,
            "dismiss_stale_reviews": False,
            "require_code_owner_reviews": False,
        }
    if "required_status_checks" in rules:
        shape["required_status_checks"] = {
            "url": f"{url}/required_status_checks",
            "contexts": list(rules["required_status_checks"]),
            "strict": True,
        }
    shape["enforce_admins"] = {
        "url": f"{url}/enforce_admins",
        "enabled": bool(rules.get("enforce_admins")),
    }
    shape["allow_force_pushes"] = {"enabled": bool(rules.get("allow_force_pushes"))}
    shape["allow_deletions"] = {"enabled": bool(rules.get("allow_deletions"))}
    return Reply(200, shape)


@handles("repos/get-collaborator-permission-level")
def collaborator_permission(call: Call) -> Reply:
    repo = call.repo()
    if not call.world.can_push(repo, call.login):
        # GitHub answers a caller without push access 403 with this message
        # (yegor256/rultor#1407); the API description lists only 200 and 404.
        raise SandboxError(403, "Must have push access to view collaborator permission.")
    user = call.world.user(call.params["username"])
    if user is None:
        raise SandboxError(404, "Not Found")
    role = call.world.permission(repo, user.login)
    permission = {"maintain": "write", "triage": "read"}.get(role, role)
    return Reply(
        200,
        {
            "permission": permission,
            "role_name": role,
            "user": {
                **call.shapes.user(user.login),
                "permissions": {
                    "admin": role == "admin",
                    "maintain": role in ("maintain", "admin"),
                    "push": permission in ("write", "admin"),
                    "triage": role != "read" and role != "none",
                    "pull": role != "none",
                },
            },
        },
    )


@handles("repos/create-dispatch-event")
def create_dispatch(call: Call) -> Reply:
    repo = call.push_repo()
    payload = call.field("client_payload") or {}
    if len(json.dumps(payload, separators=(",", ":")).encode()) >= DISPATCH_PAYLOAD_LIMIT:
        raise validation_failed(
            "Repository", "client_payload", "invalid", "client_payload must be less than 64KB"
        )
    if isinstance(payload, dict) and len(payload) > 10:
        raise validation_failed(
            "Repository", "client_payload", "invalid", "client_payload has more than 10 properties"
        )
    call.world.dispatches.append(
        Dispatch(
            repo=repo.full_name,
            event_type=call.field("event_type"),
            client_payload=payload,
            token=call.token.name if call.token else None,
            at=iso(call.world.clock.tick()) or "",
        )
    )
    return Reply(204)


# --------------------------------------------------------------------------- artifacts


@handles("actions/list-repo-secrets")
def list_secrets(call: Call) -> Reply:
    """Names and dates, never values. "Authenticated users must have collaborator
    access to a repository to create, update, or read secrets" and classic tokens
    need `repo` (docs.github.com/en/rest/actions/secrets#list-repository-secrets)."""
    repo = call.push_repo()
    items = sorted(repo.secrets.items())
    call.query.setdefault("per_page", ["30"])
    from tusk.sandbox.rest import paginate

    chunk, headers = paginate(call, items)
    listed = [{"name": n, "created_at": iso(at), "updated_at": iso(at)} for n, at in chunk]
    return Reply(200, {"total_count": len(items), "secrets": listed}, headers)


@handles("actions/list-artifacts-for-repo")
def list_artifacts(call: Call) -> Reply:
    repo = call.repo()
    name = call.arg("name")
    items = sorted(repo.artifacts.values(), key=lambda a: -a.id)
    items = [a for a in items if name is None or a.name == name]
    call.query.setdefault("per_page", ["30"])
    from tusk.sandbox.rest import paginate

    chunk, headers = paginate(call, items)
    return Reply(
        200,
        {"total_count": len(items), "artifacts": [call.shapes.artifact(repo, a) for a in chunk]},
        headers,
    )


@handles("actions/list-workflow-run-artifacts")
def list_run_artifacts(call: Call) -> Reply:
    repo = call.repo()
    run_id = call.int_param("run_id")
    name = call.arg("name")
    items = [a for a in sorted(repo.artifacts.values(), key=lambda a: -a.id) if a.run_id == run_id]
    items = [a for a in items if name is None or a.name == name]
    from tusk.sandbox.rest import paginate

    chunk, headers = paginate(call, items)
    return Reply(
        200,
        {"total_count": len(items), "artifacts": [call.shapes.artifact(repo, a) for a in chunk]},
        headers,
    )


def _artifact(call: Call, repo: Repo) -> Artifact:
    artifact = repo.artifacts.get(call.int_param("artifact_id"))
    if artifact is None:
        raise SandboxError(404, "Not Found")
    return artifact


@handles("actions/get-artifact")
def get_artifact(call: Call) -> Reply:
    repo = call.repo()
    return Reply(200, call.shapes.artifact(repo, _artifact(call, repo)))


@handles("actions/delete-artifact")
def delete_artifact(call: Call) -> Reply:
    repo = call.push_repo()
    artifact = _artifact(call, repo)
    del repo.artifacts[artifact.id]
    return Reply(204)


@handles("actions/download-artifact")
def download_artifact(call: Call) -> Reply:
    repo = call.repo()
    call.require_user()
    artifact = _artifact(call, repo)
    if call.params.get("archive_format") != "zip":
        raise SandboxError(404, "Not Found")
    if artifact.expires_at <= call.world.clock.peek():
        raise SandboxError(410, "Artifact has expired")
    location = f"{call.base}/_sandbox/blobs/artifacts/{repo.full_name}/{artifact.id}.zip"
    return Reply(302, None, {"Location": location})


def upload_artifact(
    world: object, repo: Repo, name: str, data: bytes, run_id: int, overwrite: bool
) -> Artifact:
    """The sandbox-only upload used by the local upload-artifact stand-in."""
    from tusk.sandbox.world import World

    assert isinstance(world, World)
    same_run = [a for a in repo.artifacts.values() if a.name == name and a.run_id == run_id]
    if same_run and not overwrite:
        raise SandboxError(409, f"an artifact named {name!r} already exists in run {run_id}")
    for old in same_run:
        del repo.artifacts[old.id]
    created = world.clock.tick()
    artifact = Artifact(
        id=world.new_id(),
        name=name,
        data=data,
        created_at=created,
        expires_at=created + timedelta(days=90),
        run_id=run_id,
        head_branch=repo.default_branch,
    )
    repo.artifacts[artifact.id] = artifact
    return artifact


# --------------------------------------------------------------------------- rate limit


@handles("rate-limit/get")
def rate_limit(call: Call) -> Reply:
    from tusk.sandbox.ratelimit import overview

    return Reply(200, overview(call))


# --------------------------------------------------------------------------- contents and statuses


RAW_MEDIA = re.compile(r"application/vnd\.github(?:\.v3)?\.raw")


@handles("repos/get-content")
def get_content(call: Call) -> Reply:
    repo = call.repo()
    git = call.world.git
    ref = call.arg("ref") or repo.default_branch
    sha = git.resolve(repo.full_name, ref) if git else None
    if sha is None:
        raise SandboxError(404, f"No commit found for the ref {ref}")
    path = call.params.get("path", "")
    found = git.read_path(repo.full_name, sha, path)
    if found is None:
        raise SandboxError(404, "Not Found")
    kind, value = found
    if kind == "file":
        data, blob = value
        raw = RAW_MEDIA.search(call.headers.get("accept", ""))
        if raw is not None:  # GitHub answers in the media type asked for, v3 or not
            return Reply(200, data, content_type=f"{raw[0]}; charset=utf-8")
        return Reply(200, content_entry(call, repo, path, "file", blob, len(data), ref, data))
    entries = [
        content_entry(call, repo, name, entry_kind, blob, size, ref, None)
        for name, entry_kind, blob, size in value
    ]
    return Reply(200, entries)


def content_entry(
    call: Call, repo: Repo, path: str, kind: str, sha: str, size: int, ref: str, data: bytes | None
) -> dict[str, object]:
    import base64

    url = f"{call.shapes.repo_url(repo)}/contents/{path}?ref={ref}"
    html = f"{call.base}/{repo.full_name}/{'blob' if kind == 'file' else 'tree'}/{ref}/{path}"
    git_url = f"{call.shapes.repo_url(repo)}/git/{'blobs' if kind == 'file' else 'trees'}/{sha}"
    entry: dict[str, object] = {
        "type": kind,
        "name": path.rsplit("/", 1)[-1],
        "path": path,
        "sha": sha,
        "size": size,
        "url": url,
        "git_url": git_url,
        "html_url": html,
        "download_url": f"{call.base}/{repo.full_name}/raw/{ref}/{path}"
        if kind == "file"
        else None,
        "_links": {"self": url, "git": git_url, "html": html},
    }
    if data is not None:
        entry["encoding"] = "base64"
        entry["content"] = base64.encodebytes(data).decode()
    return entry


@handles("repos/get-combined-status-for-ref")
def combined_status(call: Call) -> Reply:
    repo = call.repo()
    ref = call.params["ref"]
    sha = call.world.git.resolve(repo.full_name, ref) if call.world.git else None
    if sha is None:
        raise SandboxError(404, f"No commit found for SHA: {ref}")
    url = f"{call.shapes.repo_url(repo)}/commits/{sha}/status"
    return Reply(
        200,
        {
            "state": "pending",  # GitHub's answer for a commit without statuses
            "statuses": [],
            "sha": sha,
            "total_count": 0,
            "repository": call.shapes.small_repo(repo),
            "commit_url": f"{call.shapes.repo_url(repo)}/commits/{sha}",
            "url": url,
        },
    )


@handles("checks/list-for-ref")
def list_check_runs(call: Call) -> Reply:
    repo = call.repo()
    ref = call.params["ref"]
    if (call.world.git.resolve(repo.full_name, ref) if call.world.git else None) is None:
        raise SandboxError(404, f"No commit found for SHA: {ref}")
    return Reply(200, {"total_count": 0, "check_runs": []})  # the sandbox runs no checks
