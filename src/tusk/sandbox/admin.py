"""The admin API under ``/_sandbox/``: scenarios, state, journal, dispatches, faults,
violations, notes, the wall clock, and the artifact routes the local upload-artifact
stand-in uses.

Tests, the demo and ``act`` runs depend on these routes; keep them stable.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tusk.sandbox.faults import parse_fault
from tusk.sandbox.outcomes import Outcome, json_outcome
from tusk.sandbox.scenario import ScenarioError
from tusk.sandbox.shapes import Shapes
from tusk.sandbox.world import SandboxError, World
from tusk.sandbox.world_clock import iso

if TYPE_CHECKING:
    from tusk.sandbox.app_view import AppView


def handle_admin(
    app: AppView,
    method: str,
    path: str,
    query: dict[str, list[str]],
    headers: Mapping[str, str],
    body: bytes,
) -> Outcome:
    route = (method, path.rstrip("/"))
    if route == ("POST", "/_sandbox/scenario"):
        try:
            world = app.load(body.decode("utf-8") if body else None)
        except ScenarioError as error:
            return json_outcome(400, {"message": str(error), "problems": error.problems})
        return json_outcome(
            200, {"loaded": True, "repos": sorted(r.full_name for r in world.repos.values())}
        )
    if route == ("GET", "/_sandbox/state"):
        with app.lock:
            return json_outcome(200, dump_state(app.world))
    if route == ("GET", "/_sandbox/journal"):
        with app.lock:
            return json_outcome(200, list(app.journal))
    if route == ("GET", "/_sandbox/dispatches"):
        with app.lock:
            return json_outcome(200, [dataclasses.asdict(d) for d in app.world.dispatches])
    if route == ("GET", "/_sandbox/violations"):
        with app.lock:
            return json_outcome(200, list(app.violations))
    if route == ("POST", "/_sandbox/violations/clear"):
        with app.lock:
            app.violations.clear()
        return json_outcome(204, None)
    if route == ("GET", "/_sandbox/notes"):
        with app.lock:
            return json_outcome(200, list(app.notes))
    if route == ("POST", "/_sandbox/clock"):
        # Move the sandbox's wall clock (rate-limit windows, listing lag) and a
        # scenario's own clock (timestamps, the Date header) forward, so a test's
        # injected sleep can let the time pass that a real one would.
        try:
            advance = float(json.loads(body or b"{}").get("advance", 0))
        except (ValueError, AttributeError, TypeError) as error:
            return json_outcome(400, {"message": f"invalid clock change: {error}"})
        if advance < 0:
            return json_outcome(400, {"message": "the clock only moves forward"})
        with app.lock:
            app.world.time_offset += advance
            app.world.clock.advance(advance)  # a scenario's own clock moves on too
            return json_outcome(200, {"wall": app.world.wall(), "offset": app.world.time_offset})
    if route == ("GET", "/_sandbox/faults"):
        with app.lock:
            return json_outcome(200, [dataclasses.asdict(f) for f in app.faults])
    if route == ("DELETE", "/_sandbox/faults"):
        with app.lock:
            app.faults.clear()
        return json_outcome(204, None)
    if route == ("POST", "/_sandbox/faults"):
        try:
            fault = parse_fault(json.loads(body or b"{}"))
        except (ValueError, KeyError, TypeError, re.error) as error:
            return json_outcome(400, {"message": f"invalid fault: {error}"})
        with app.lock:
            app.faults.append(fault)
        return json_outcome(201, dataclasses.asdict(fault))
    blob = re.fullmatch(r"/_sandbox/blobs/artifacts/([^/]+)/([^/]+)/(\d+)\.zip", path)
    if blob and method == "GET":
        with app.lock:
            repo = app.world.repo(blob.group(1), blob.group(2))
            artifact = repo.artifacts.get(int(blob.group(3))) if repo else None
        if artifact is None:
            return json_outcome(404, {"message": "Not Found"})
        return Outcome(200, {"Content-Type": "application/zip"}, artifact.data)
    upload = re.fullmatch(r"/_sandbox/artifacts/([^/]+)/([^/]+)", path)
    if upload and method == "POST":
        return _upload_artifact(app, upload.group(1), upload.group(2), query, headers, body)
    return json_outcome(404, {"message": f"no sandbox admin route {method} {path}"})


def _upload_artifact(
    app: AppView,
    owner: str,
    name: str,
    query: dict[str, list[str]],
    headers: Mapping[str, str],
    body: bytes,
) -> Outcome:
    from tusk.sandbox.artifacts import zip_files
    from tusk.sandbox.rest_repos import upload_artifact

    # The runner uploads with its own runtime credentials, not a GitHub token:
    # no Authorization is accepted, but a token that is sent must be able to push.
    token, problem = app.token_for(headers)
    if problem:
        return json_outcome(401, {"message": problem})
    params = {k: v[-1] for k, v in query.items()}
    if "json" in headers.get("content-type", ""):
        spec = json.loads(body or b"{}")
        params.update({k: str(v) for k, v in spec.items() if k != "files"})
        data = zip_files({k: str(v) for k, v in (spec.get("files") or {}).items()})
    else:
        data = body
    if not params.get("name"):
        return json_outcome(400, {"message": "name is required"})
    with app.lock:
        repo = app.world.repo(owner, name)
        # A workflow's GITHUB_TOKEN is its own repository's, whoever its user is.
        bound = (token.repository or "").lower() if token is not None else ""
        own = repo is not None and bound == repo.full_name.lower()
        if repo is None or (
            token is not None
            and not own
            and (token.read_only or not app.world.can_push(repo, token.user))
        ):
            return json_outcome(404, {"message": "Not Found"})
        try:
            artifact = upload_artifact(
                app.world,
                repo,
                params["name"],
                data,
                int(params.get("run_id", "1")),
                params.get("overwrite") == "true",
            )
        except SandboxError as error:
            return json_outcome(error.status, {"message": error.message})
        shape = Shapes(app.world, app.base).artifact(repo, artifact)
    return json_outcome(201, shape)


def to_jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: to_jsonable(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if not f.name.startswith("_")
        }
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, set):
        return sorted(to_jsonable(v) for v in value)
    if isinstance(value, bytes):
        return {"bytes": len(value)}
    return value


def dump_state(world: World) -> dict[str, Any]:
    repos = {}
    for repo in world.repos.values():
        shape = to_jsonable(repo)
        shape["full_name"] = repo.full_name
        shape["issues"] = {str(n): to_jsonable(i) for n, i in repo.issues.items()}
        if world.git is not None:
            shape["branches"] = {b.name: b.sha for b in world.git.branches(repo.full_name)}
        repos[repo.full_name] = shape
    return {
        "now": iso(world.clock.peek()),
        "users": [to_jsonable(u) for u in world.users.values()],
        "tokens": {
            name: {"user": t.user, "scopes": t.scopes, "read_only": t.read_only}
            for name, t in world.tokens.items()
        },
        "repos": repos,
        "notifications": [to_jsonable(t) for t in world.threads],
        "dispatches": [to_jsonable(d) for d in world.dispatches],
    }
