"""The local GitHub's request pipeline, held to GitHub's API descriptions.

``SandboxApp.handle`` is the whole request pipeline, free of sockets:
admin routes (``/_sandbox/...``), git smart HTTP (``/{owner}/{name}.git``),
GraphQL (``/graphql``) and REST. A REST request is matched to a documented
operation, its query and body are validated, faults are applied, the
handler runs under the state lock, and the response is completed and
validated against the documented schema for its status. In strict mode a
violation is answered 500 with a ``sandbox spec violation:`` message; either
way it is recorded for ``GET /_sandbox/violations``. The HTTP edge around it is
``tusk.sandbox.github_server``; access rules are ``github_access``, git ``github_git``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from tusk.sandbox import graphql_cost, ratelimit, repo_ids, secondary
from tusk.sandbox import rest_actions_setup as _actions_setup  # noqa: F401
from tusk.sandbox import rest_attestations as _attestations  # noqa: F401
from tusk.sandbox import rest_issues as _issues  # noqa: F401 - registers handlers
from tusk.sandbox import rest_notifications as _notifications  # noqa: F401
from tusk.sandbox import rest_pulls as _pulls  # noqa: F401
from tusk.sandbox import rest_repos as _repos  # noqa: F401
from tusk.sandbox import rest_runs as _runs  # noqa: F401
from tusk.sandbox import rest_setup as _setup  # noqa: F401
from tusk.sandbox.admin import handle_admin
from tusk.sandbox.faults import Fault, fault_message
from tusk.sandbox.github_access import (
    ADMIN_HEADER,
    INBOX_OPERATIONS,
    is_runner_route,
    read_only_may,
)
from tusk.sandbox.github_git import GIT_PATH, git_route
from tusk.sandbox.gitstore import GitStore
from tusk.sandbox.outcomes import DOCS, DROP, Outcome, error_reply, json_outcome, reply_outcome
from tusk.sandbox.rest import HANDLERS, Call, Reply
from tusk.sandbox.scenario import (
    build_world,
    parse_scenario_text,
)
from tusk.sandbox.shapes import Shapes
from tusk.sandbox.spec import OpenApi, Operation, load_openapi
from tusk.sandbox.world import SandboxError, World
from tusk.sandbox.world_records import Token

VIOLATION_PREFIX = "sandbox spec violation:"
JOURNAL_BODY_LIMIT = 100_000
RATE_LIMIT_DOCS = (
    "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"
    "#about-the-primary-rate-limit"
)


class SandboxApp:
    """State, checks and routing of one local GitHub."""

    def __init__(
        self, *, strict: bool = True, git_root: Any = None, admin_secret: str | None = None
    ) -> None:
        self.strict = strict
        # The admin API (state with every token, scenarios, faults) answers only those
        # who hold this; an agent under test never does, so its probes mean something.
        self.admin_secret = admin_secret or secrets.token_hex(16)
        self.spec: OpenApi = load_openapi()
        self.git = GitStore(git_root)
        self.base = "http://127.0.0.1"
        self.world = World(git=self.git)
        self.lock = threading.RLock()
        self.journal: list[dict[str, Any]] = []
        self.violations: list[dict[str, Any]] = []
        self.notes: list[dict[str, Any]] = []
        self.faults: list[Fault] = []

    # -- scenario

    def load(self, scenario: Mapping[str, Any] | str | None) -> World:
        data: Mapping[str, Any]
        if scenario is None:
            data = {}
        elif isinstance(scenario, str):
            data = parse_scenario_text(scenario)
        else:
            data = scenario
        with self.lock:
            self.git.reset()
            world = build_world(dict(data), self.git)
            self.world = world
            # Violations outlive a scenario change so a test that reloads mid-way
            # still fails for what it sent before; they are cleared explicitly.
            self.journal.clear()
            self.faults.clear()
        return world

    # -- entry point

    def handle(
        self, method: str, target: str, headers: Mapping[str, str], body: bytes
    ) -> Outcome | object:
        parts = urlsplit(target)
        path = unquote(parts.path) or "/"
        query = parse_qs(parts.query, keep_blank_values=True)
        lowered = {k.lower(): v for k, v in headers.items()}
        if path.startswith("/_sandbox/"):
            if not is_runner_route(path) and not self.admin_allowed(lowered):
                return json_outcome(
                    401, {"message": f"the sandbox admin API needs the {ADMIN_HEADER} header"}
                )
            return handle_admin(self, method, path, query, lowered, body)
        token, auth_problem = self.token_for(lowered)
        login = token.user if token else ""
        with self.lock:
            limits = self.world.secondary
            limits.enter(login)  # GitHub counts concurrent requests per user
        try:
            return self._handle(
                method, path, parts.query, query, lowered, body, token, auth_problem
            )
        finally:
            with self.lock:
                limits.leave(login)

    def _handle(
        self,
        method: str,
        path: str,
        raw_query: str,
        query: dict[str, list[str]],
        lowered: dict[str, str],
        body: bytes,
        token: Token | None,
        auth_problem: str | None,
    ) -> Outcome | object:
        entry: dict[str, Any] = {
            "seq": len(self.journal) + 1,
            "method": method,
            "path": path,
            "query": {k: v[-1] if len(v) == 1 else v for k, v in query.items()},
            "token": token.name if token else None,
            "body": _journal_body(body, lowered.get("content-type", "")),
        }
        with self.lock:
            # A fault set on a route hits every page of it, also those GitHub's Link
            # sends to /repositories/{id}/...
            route = repo_ids.canonical_path(self.world, path) or path
        fault = self._take_fault(method, path, body, route)
        if fault is not None and not fault.lands:
            if fault.delay:
                time.sleep(fault.delay)
            lost = self._fault_answer(fault, entry, note="fault")
            if lost is not None:
                return lost
        if GIT_PATH.match(path):
            outcome = git_route(self, method, path, raw_query, lowered, body, token, auth_problem)
        elif path == "/graphql":
            outcome = self._graphql(method, lowered, body, token, auth_problem)
        else:
            outcome = self._rest(method, path, query, lowered, body, token, auth_problem, entry)
        if fault is not None and fault.lands:
            # Applied; now the answer is lost on its way back (or comes too late).
            entry["applied_status"] = outcome.status
            if fault.delay:
                time.sleep(fault.delay)
            lost = self._fault_answer(fault, entry, note="fault after the request landed")
            if lost is not None:
                return lost
        self._journal(entry, outcome.status)
        return outcome

    def _fault_answer(
        self, fault: Fault, entry: dict[str, Any], *, note: str
    ) -> Outcome | object | None:
        """The fault's own answer (a dropped connection or an error status), if it has one."""
        if fault.drop:
            self._journal(entry, 0, note=f"dropped by {note}")
            return DROP
        if fault.status is not None:
            message = fault.message or fault_message(fault.status)
            self._journal(entry, fault.status, note=note)
            return json_outcome(
                fault.status, {"message": message, "documentation_url": DOCS}, fault.headers
            )
        return None

    def _journal(self, entry: dict[str, Any], status: int, note: str | None = None) -> None:
        entry["status"] = status
        if note:
            entry["note"] = note
        with self.lock:
            entry["seq"] = len(self.journal) + 1
            self.journal.append(entry)

    def _take_fault(
        self, method: str, path: str, body: bytes = b"", route: str | None = None
    ) -> Fault | None:
        with self.lock:
            for fault in self.faults:
                hit = fault.matches(method, path, body) or (
                    route is not None and route != path and fault.matches(method, route, body)
                )
                if hit and (fault.count is None or fault.count > 0):
                    if fault.count is not None:
                        fault.count -= 1
                    return fault
        return None

    def admin_allowed(self, headers: Mapping[str, str]) -> bool:
        given = headers.get(ADMIN_HEADER.lower(), "")
        return hmac.compare_digest(given.encode(), self.admin_secret.encode())

    def token_for(self, headers: Mapping[str, str]) -> tuple[Token | None, str | None]:
        value = headers.get("authorization", "")
        if not value:
            return None, None
        scheme, _, credential = value.partition(" ")
        scheme = scheme.lower()
        if scheme == "basic":
            try:
                decoded = base64.b64decode(credential).decode()
            except (ValueError, UnicodeDecodeError):
                return None, "Bad credentials"
            credential = decoded.partition(":")[2]
        elif scheme not in ("token", "bearer"):
            return None, "Bad credentials"
        token = self.world.tokens.get(credential.strip())
        return (token, None) if token else (None, "Bad credentials")

    def record_violation(self, method: str, path: str, problems: list[str], kind: str) -> str:
        message = f"{VIOLATION_PREFIX} {method} {path}: " + "; ".join(problems)
        with self.lock:
            self.violations.append(
                {
                    "method": method,
                    "path": path,
                    "kind": kind,
                    "problems": problems,
                    "message": message,
                }
            )
        return message

    def note(self, kind: str, detail: str) -> None:
        with self.lock:
            if not any(n["kind"] == kind and n["detail"] == detail for n in self.notes):
                self.notes.append({"kind": kind, "detail": detail})

    # -- REST

    def _rest(
        self,
        method: str,
        path: str,
        query: dict[str, list[str]],
        headers: Mapping[str, str],
        raw: bytes,
        token: Token | None,
        auth_problem: str | None,
        entry: dict[str, Any],
    ) -> Outcome:
        with self.lock:
            documented = repo_ids.canonical_path(self.world, path)
        if documented is None:  # no repository has that id
            return json_outcome(404, {"message": "Not Found", "documentation_url": DOCS})
        entry["route"] = documented  # one operation, whichever spelling GitHub's links used
        path = documented
        op = self.spec.match(method, path)
        if op is None:
            message = self.record_violation(
                method, path, ["no such operation in GitHub's REST description"], "request"
            )
            if self.strict:
                return json_outcome(500, {"message": message})
            return json_outcome(404, {"message": "Not Found", "documentation_url": DOCS})
        entry["operation"] = op.operation_id
        body, has_body, parse_problem = _parse_json(raw)
        problems = (
            [parse_problem] if parse_problem else self.spec.check_request(op, query, body, has_body)
        )
        refused = _documented_refusal(op.operation_id, problems)
        if refused is not None:
            return json_outcome(422, refused)
        if problems:
            message = self.record_violation(method, path, problems, "request")
            if self.strict:
                return json_outcome(500, {"message": message})
        if auth_problem:
            return json_outcome(401, {"message": auth_problem, "documentation_url": DOCS})
        counted = path not in ratelimit.UNCOUNTED_PATHS
        reply, ran = self._limited_or_run(
            op, method, path, query, headers, body, token, counted=counted
        )
        return self._respond(op, method, path, headers, reply, token, charge=counted and ran)

    def _limited_or_run(
        self,
        op: Operation,
        method: str,
        path: str,
        query: dict[str, list[str]],
        headers: Mapping[str, str],
        body: Any,
        token: Token | None,
        *,
        counted: bool,
    ) -> tuple[Reply, bool]:
        """The operation's reply, or GitHub's refusal past a primary or secondary limit;
        and whether it ran (refusals past a limit are not charged)."""
        who = token.name if token else ""
        resource = ratelimit.resource_for(path)
        refusal: secondary.Refusal | None = None
        with self.lock:
            limited = counted and ratelimit.exhausted(self.world, who, resource)
            if not limited:
                refusal = self.world.secondary.check(
                    token.user if token else "",
                    now=self.world.wall(),
                    points=secondary.rest_points(method),
                    content=method in secondary.WRITE_METHODS
                    and op.operation_id not in INBOX_OPERATIONS,
                )
        if limited:
            message = {
                "message": ratelimit.exceeded_message(who),
                "documentation_url": RATE_LIMIT_DOCS,
            }
            return Reply(403, message), False
        if refusal is not None:
            message = {"message": refusal.message, "documentation_url": secondary.DOCS}
            return Reply(refusal.status, message, refusal.headers()), False
        reply = self._run(
            op.operation_id, method, path, op.path_params, query, headers, body, token
        )
        return reply, True

    def _respond(
        self,
        op: Operation,
        method: str,
        path: str,
        headers: Mapping[str, str],
        reply: Reply,
        token: Token | None,
        *,
        charge: bool,
    ) -> Outcome:
        """The reply completed and checked against the description, with its ETag (a 304
        when it matches), the rate-limit headers and the token's scopes."""
        who = token.name if token else ""
        resource = ratelimit.resource_for(path)
        if isinstance(reply.body, (dict, list)) and reply.status < 300:
            reply.body = self.spec.complete(op, reply.status, reply.body)
        is_json = reply.content_type.startswith("application/json")
        problems = self.spec.check_response(op, reply.status, reply.body, is_json)
        etag = _etag(reply) if method == "GET" and reply.status == 200 else None
        if etag is not None:
            reply.headers["ETag"] = etag
            if headers.get("if-none-match") in (etag, etag.removeprefix("W/")):
                reply = Reply(304, None, {"ETag": etag})
        with self.lock:
            if reply.status != 304 and charge:
                # GitHub counts neither conditional hits nor refusals past the limit.
                ratelimit.spend(self.world, who, resource)
            rate_headers = ratelimit.headers(self.world, who, resource)
        if token is not None and token.repository is None:
            # A classic token's scopes ride on every authenticated REST response; tools
            # read them to say what a token may do. Source: docs.github.com/en/apps/
            # oauth-apps/building-oauth-apps/scopes-for-oauth-apps ("X-OAuth-Scopes
            # lists the scopes your token has authorized").
            rate_headers["X-OAuth-Scopes"] = ", ".join(token.scopes)
        reply.headers = {**rate_headers, **reply.headers}
        if problems:
            message = self.record_violation(method, path, problems, "response")
            if self.strict:
                return json_outcome(500, {"message": message}, rate_headers)
        return reply_outcome(reply)

    def _run(
        self,
        operation_id: str,
        method: str,
        path: str,
        params: Mapping[str, str],
        query: dict[str, list[str]],
        headers: Mapping[str, str],
        body: Any,
        token: Token | None,
    ) -> Reply:
        handler = HANDLERS.get(operation_id)
        if handler is None:
            # A stub answer would let a caller that shrugs off errors pass a test
            # against an operation nobody checked, so it fails the test too.
            self.note("unimplemented-operation", operation_id)
            message = self.record_violation(
                method,
                path,
                [
                    f"the sandbox does not implement {operation_id}; "
                    "add a handler in sandbox/rest_*.py"
                ],
                "unimplemented",
            )
            return Reply(500 if self.strict else 501, {"message": message})
        if (
            token is not None
            and token.read_only
            and method not in ("GET", "HEAD")
            and not read_only_may(operation_id, body)
        ):
            return error_reply(
                SandboxError(403, "Resource not accessible by personal access token")
            )
        with self.lock:
            world = self.world
            call = Call(
                method=method,
                path=path,
                params=dict(params),
                query=query,
                body=body if body is not None else {},
                token=token,
                headers=dict(headers),
                world=world,
                shapes=Shapes(world, self.base),
                base=self.base,
            )
            try:
                return handler(call)
            except SandboxError as error:
                return error_reply(error)

    # -- GraphQL

    def _graphql(
        self,
        method: str,
        headers: Mapping[str, str],
        raw: bytes,
        token: Token | None,
        auth_problem: str | None,
    ) -> Outcome:
        from tusk.sandbox.graphql_api import GraphQLViolation, execute

        if method != "POST":
            return json_outcome(404, {"message": "Not Found"})
        if auth_problem or token is None:
            return json_outcome(
                401, {"message": auth_problem or "This endpoint requires you to be authenticated."}
            )
        body, _, parse_problem = _parse_json(raw)
        if parse_problem or not isinstance(body, dict) or not isinstance(body.get("query"), str):
            return json_outcome(400, {"message": "Problems parsing JSON"})
        variables = body.get("variables") or {}
        measured = graphql_cost.measure(body["query"], variables, body.get("operationName"))
        with self.lock:
            world = self.world
            rate_headers = ratelimit.headers(world, token.name, "graphql")
            if measured is not None and measured.too_many_nodes:
                # Refused before it runs, at no cost (graphql_cost's source).
                return json_outcome(200, {"errors": [measured.node_limit_error()]}, rate_headers)
            mutation = measured is not None and measured.mutation
            refusal = world.secondary.check(
                token.user,
                now=world.wall(),
                points=5 if mutation else 1,
                content=mutation,
                graphql=True,
            )
            if refusal is not None:
                body_out = {"message": refusal.message, "documentation_url": secondary.DOCS}
                return json_outcome(403, body_out, {**rate_headers, **refusal.headers()})
            cost = measured.cost if measured is not None else 1
            if ratelimit.remaining(world, token.name, "graphql") < cost:
                # GitHub answers a spent GraphQL budget with 200 and a RATE_LIMITED error.
                limited = {
                    "type": "RATE_LIMITED",
                    "message": f"API rate limit exceeded for user {token.user}.",
                }
                return json_outcome(200, {"errors": [limited]}, rate_headers)
            ratelimit.spend(world, token.name, "graphql", cost)
            rate_headers = ratelimit.headers(world, token.name, "graphql")
            try:
                result = execute(
                    self,
                    token,
                    body["query"],
                    variables,
                    body.get("operationName"),
                    measured=measured,
                )
            except GraphQLViolation as violation:
                return json_outcome(500, {"message": str(violation)}, rate_headers)
        return json_outcome(200, result, rate_headers)


# --------------------------------------------------------------------------- helpers


def _parse_json(raw: bytes) -> tuple[Any, bool, str | None]:
    if not raw or not raw.strip():
        return None, False, None
    try:
        return json.loads(raw), True, None
    except ValueError as error:
        return None, True, f"the request body is not JSON: {error}"


def _journal_body(raw: bytes, content_type: str) -> Any:
    if not raw:
        return None
    if len(raw) > JOURNAL_BODY_LIMIT:
        return {"truncated": True, "bytes": len(raw)}
    try:
        return json.loads(raw)
    except ValueError:
        if "text" in content_type:
            return raw.decode("utf-8", errors="replace")
        return {"bytes": len(raw)}


# Request checks GitHub itself answers 422 (a documented limit, not an undocumented
# request): (operation, the start of the description's problem) -> GitHub's error.
DOCUMENTED_LIMITS = {
    # repos/create-dispatch-event: event_type has maxLength 100 in the API description.
    ("repos/create-dispatch-event", "body.event_type:"): {
        "resource": "Repository",
        "field": "event_type",
        "code": "invalid",
        "message": "event_type is too long (maximum is 100 characters)",
    },
}


def _documented_refusal(operation_id: str, problems: list[str]) -> dict[str, Any] | None:
    """GitHub's 422 body when every problem is a documented limit GitHub enforces itself."""
    errors = []
    for problem in problems:
        found = next(
            (
                error
                for (op, start), error in DOCUMENTED_LIMITS.items()
                if op == operation_id and problem.startswith(start) and "too long" in problem
            ),
            None,
        )
        if found is None:
            return None
        errors.append(found)
    if not errors:
        return None
    return {"message": "Validation Failed", "errors": errors, "documentation_url": DOCS}


def _etag(reply: Reply) -> str:
    body = reply.body
    data = body if isinstance(body, bytes) else json.dumps(body, sort_keys=True).encode()
    return 'W/"' + hashlib.sha256(data).hexdigest()[:40] + '"'
