"""The local GitHub: an HTTP server on 127.0.0.1 held to GitHub's API descriptions.

``SandboxApp.handle`` is the whole request pipeline, free of sockets:
admin routes (``/_sandbox/...``), git smart HTTP (``/{owner}/{name}.git``),
GraphQL (``/graphql``) and REST. A REST request is matched to a documented
operation, its query and body are validated, faults are applied, the
handler runs under the state lock, and the response is completed and
validated against the documented schema for its status. In strict mode a
violation is answered 500 with a ``sandbox spec violation:`` message; either
way it is recorded for ``GET /_sandbox/violations``.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
import os
import re
import secrets
import signal
import socket
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from tusk.sandbox import graphql_cost, ratelimit, secondary
from tusk.sandbox import rest_issues as _issues  # noqa: F401 - registers handlers
from tusk.sandbox import rest_notifications as _notifications  # noqa: F401
from tusk.sandbox import rest_pulls as _pulls  # noqa: F401
from tusk.sandbox import rest_repos as _repos  # noqa: F401
from tusk.sandbox import rest_runs as _runs  # noqa: F401
from tusk.sandbox.admin import handle_admin
from tusk.sandbox.faults import Fault, fault_message
from tusk.sandbox.gitstore import GitStore
from tusk.sandbox.http_body import read_body
from tusk.sandbox.outcomes import DOCS, DROP, Outcome, error_reply, json_outcome, reply_outcome
from tusk.sandbox.rest import HANDLERS, Call, Reply
from tusk.sandbox.scenario import (
    build_world,
    parse_scenario_text,
    read_scenario_file,
)
from tusk.sandbox.shapes import Shapes
from tusk.sandbox.spec import OpenApi, Operation, load_openapi
from tusk.sandbox.world import SandboxError, Token, World

VIOLATION_PREFIX = "sandbox spec violation:"
GIT_PATH = re.compile(r"^/([^/]+)/([^/]+?)\.git(/.*)?$")
INBOX_OPERATIONS = frozenset(
    {
        "activity/mark-thread-as-read",
        "activity/mark-thread-as-done",
        "activity/mark-notifications-as-read",
        "activity/mark-repo-notifications-as-read",
    }
)
# Reactions a read-only token may still add: the poller acknowledges a mention with
# its bot token (Tusk's "read-only" is its own discipline; GitHub lets a classic
# token with `repo` react anywhere its user may).
READ_ONLY_REACTIONS = frozenset(
    {
        "reactions/create-for-issue-comment",
        "reactions/create-for-issue",
        "reactions/create-for-pull-request-review-comment",
    }
)
# The poller's one comment: its answer on a thread whose mention is over a limit
# across runs (tusk.github.limit_reply), told by the marker it opens with. Any other
# comment by a read-only token is still refused.
LIMIT_ANSWER_OPENING = "<!-- tusk:limit "


def read_only_may(operation_id: str, body: Any) -> bool:
    """Whether Tusk's read-only discipline lets a read-only token make this write."""
    if operation_id in INBOX_OPERATIONS or operation_id in READ_ONLY_REACTIONS:
        return True
    text = body.get("body") if isinstance(body, dict) else None
    return (
        operation_id == "issues/create-comment"
        and isinstance(text, str)
        and text.startswith(LIMIT_ANSWER_OPENING)
    )


JOURNAL_BODY_LIMIT = 100_000
ADMIN_HEADER = "X-Tusk-Admin"
ADMIN_SECRET_ENV = "TUSK_SANDBOX_ADMIN_SECRET"


def is_runner_route(path: str) -> bool:
    """Artifact storage, which the workflows' upload step uses with the runner's own
    credentials as on GitHub; every other ``/_sandbox/`` route is admin-only."""
    return path.startswith(("/_sandbox/artifacts/", "/_sandbox/blobs/"))


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
        fault = self._take_fault(method, path, body)
        if fault is not None and not fault.lands:
            if fault.delay:
                time.sleep(fault.delay)
            lost = self._fault_answer(fault, entry, note="fault")
            if lost is not None:
                return lost
        if GIT_PATH.match(path):
            outcome = self._git(method, path, raw_query, lowered, body, token, auth_problem)
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

    def _take_fault(self, method: str, path: str, body: bytes = b"") -> Fault | None:
        with self.lock:
            for fault in self.faults:
                if fault.matches(method, path, body) and (fault.count is None or fault.count > 0):
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

    # -- git smart HTTP

    def _git(
        self,
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
        with self.lock:
            repo = self.world.repo(owner, name)
            login = token.user if token else None
            visible = repo is not None and self.world.can_see(repo, login)
            if (
                repo is not None
                and repo.private
                and token is not None
                and "repo" not in token.scopes
            ):
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
                    and self.world.can_push(repo, login)
                    and not repo.archived
                )
                if not allowed:
                    text = f"Permission to {repo.full_name}.git denied to {login}.\n"
                    return Outcome(403, {"Content-Type": "text/plain"}, text.encode())
            full_name = repo.full_name
        extra = {
            "TUSK_SANDBOX_WORKFLOW_SCOPE": "1" if token and "workflow" in token.scopes else "0"
        }
        if headers.get("content-encoding"):
            extra["HTTP_CONTENT_ENCODING"] = headers["content-encoding"]
        if headers.get("git-protocol"):
            extra["HTTP_GIT_PROTOCOL"] = headers["git-protocol"]
        owner_dir, name_dir = full_name.lower().split("/")
        status, out_headers, out_body = self.git.http_backend(
            method=method,
            path_info=f"/{owner_dir}/{name_dir}.git{rest}",
            query=query,
            content_type=headers.get("content-type", ""),
            body=body,
            remote_user=login,
            extra_env=extra,
        )
        if pushing and method == "POST" and status == 200:
            with self.lock:
                pushed = self.world.repo(owner, name)
                if pushed is not None:
                    pushed.pushed_at = self.world.clock.tick()
                    pushed.updated_at = pushed.pushed_at
        return Outcome(status, dict(out_headers), out_body)


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


# --------------------------------------------------------------------------- HTTP edge


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "tusk-sandbox-github"
    app: SandboxApp

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in separate writes; without this, Nagle's
        # algorithm and delayed ACKs add ~40 ms to every keep-alive response.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the journal is the log

    def date_time_string(self, timestamp: float | None = None) -> str:
        # GitHub's Date header is GitHub's clock; a scenario with a fixed "now" keeps its own.
        if timestamp is not None:
            return super().date_time_string(timestamp)
        return format_datetime(self.app.world.clock.now(), usegmt=True)

    def _read_body(self) -> bytes:
        return read_body(self.headers, self.rfile)

    def _serve(self) -> None:
        body = self._read_body()
        headers = {k: v for k, v in self.headers.items()}
        try:
            outcome = self.app.handle(self.command, self.path, headers, body)
        except Exception as error:
            import traceback

            traceback.print_exc(file=sys.stderr)
            outcome = json_outcome(500, {"message": f"sandbox internal error: {error!r}"})
        if outcome is DROP:
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        assert isinstance(outcome, Outcome)
        self.send_response(outcome.status)
        for name, value in outcome.headers.items():
            if name.lower() not in ("content-length", "connection"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(outcome.body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(outcome.body)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = do_HEAD = _serve


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


@dataclass
class RunningServer:
    app: SandboxApp
    server: _Server
    thread: threading.Thread

    @property
    def url(self) -> str:
        return self.app.base

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
        self.app.git.cleanup()


def start_server(
    *,
    port: int = 0,
    scenario: Mapping[str, Any] | str | None = None,
    strict: bool = True,
    admin_secret: str | None = None,
) -> RunningServer:
    """Start the local GitHub on a background thread (``port=0`` picks a free port).
    ``running.app.admin_secret`` opens its admin API (one is made up when not given)."""
    app = SandboxApp(strict=strict, admin_secret=admin_secret)
    handler = type("Handler", (_RequestHandler,), {"app": app})
    server = _Server(("127.0.0.1", port), handler)
    app.base = f"http://127.0.0.1:{server.server_address[1]}"
    if scenario is not None:
        app.load(scenario)
    thread = threading.Thread(target=server.serve_forever, name="sandbox-github", daemon=True)
    thread.start()
    return RunningServer(app, server, thread)


def serve_forever(*, port: int = 0, scenario: str | None = None, strict: bool = True) -> int:
    """``tusk sandbox github``: print the base URL, then serve until SIGTERM/SIGINT."""
    data = read_scenario_file(scenario) if scenario else None
    running = start_server(
        port=port, scenario=data, strict=strict, admin_secret=os.environ.get(ADMIN_SECRET_ENV)
    )
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    print(running.url, flush=True)
    try:
        stop.wait()
    finally:
        running.stop()
    return 0
