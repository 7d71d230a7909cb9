"""The scripted model: a local Anthropic Messages API that plays a script.

``POST /v1/messages`` answers each request with the next step of the script,
as an SSE stream or plain JSON depending on the request's ``stream``. Every
request is journaled (``GET /_model/journal``); an unmet ``expect`` is
answered with an error naming the step and the reason, and recorded in the
journal and in ``GET /_model/failures``. The script format lives in
``model_script.py`` and ``sandbox/scenarios/MODEL_SCRIPTS.md``.
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tusk.sandbox.http_body import read_body
from tusk.sandbox.model_script import (
    ERROR_TYPES,
    Block,
    Script,
    Step,
    expand,
    load_script,
    pick_conversation,
    unmet,
)

DEFAULT_CONVERSATION = "default"
ADMIN_HEADER = "X-Tusk-Admin"  # as the local GitHub's
ADMIN_SECRET_ENV = "TUSK_SANDBOX_ADMIN_SECRET"


@dataclass(frozen=True)
class Reply:
    """What to send back for one request."""

    status: int = 200
    content: list[dict[str, Any]] = field(default_factory=list)
    error_type: str = ""
    message: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    sse_error: bool = False
    number: int = 0

    @property
    def stop_reason(self) -> str:
        return "tool_use" if any(b["type"] == "tool_use" for b in self.content) else "end_turn"


def _error_reply(status: int, message: str, error_type: str = "") -> Reply:
    return Reply(
        status=status,
        error_type=error_type or ERROR_TYPES.get(status, "api_error"),
        message=message,
    )


HOLD_SECONDS = 600.0  # a gate nobody releases: the request is answered after all


class Player:
    """The script's cursor(s) and the journal; thread-safe, no I/O but ``sleep``."""

    def __init__(
        self,
        script: Script,
        sleep: Callable[[float], object],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.script = script
        self._sleep = sleep
        self._clock = clock  # when each request came (bench/bench_setup.py: the first one)
        self._steps = [expand(script.steps)] + [expand(c.steps) for c in script.conversations]
        self._cursors = [0] * len(self._steps)
        self._lock = threading.Lock()
        self._journal: list[dict[str, Any]] = []
        self._failures: list[dict[str, Any]] = []
        self._count = 0
        self._gates: dict[str, threading.Event] = {}

    def release(self, gate: str) -> None:
        """Open ``gate``: every request a ``hold`` step keeps on it is answered."""
        with self._lock:
            self._gates.setdefault(gate, threading.Event()).set()

    def release_all(self) -> None:
        with self._lock:
            for gate in self._gates.values():
                gate.set()

    def _gate(self, name: str) -> threading.Event:
        return self._gates.setdefault(name, threading.Event())

    def journal(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._journal)

    def failures(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._failures)

    def unreached(self) -> list[dict[str, Any]]:
        """Expect steps no request reached in a conversation that did start.

        A run that stops early (a crash, a refused tool) never sends the request
        an ``expect`` checks; that is as much a failure as a request that breaks it.
        """
        with self._lock:
            out = []
            for which, steps in enumerate(self._steps):
                cursor = self._cursors[which]
                if cursor == 0 or any(
                    f["conversation"] == self._name(which) for f in self._failures
                ):
                    continue  # never started, or already failed loudly
                for index in range(cursor, len(steps)):
                    if steps[index].expect is not None:
                        why = f"never reached: the run sent no request after step {cursor - 1}"
                        out.append(
                            {
                                "n": None,
                                "conversation": self._name(which),
                                "step": index,
                                "reasons": [why],
                            }
                        )
            return out

    def _name(self, which: int) -> str:
        if which == 0:
            return DEFAULT_CONVERSATION
        return self.script.conversations[which - 1].when_prompt_contains

    def _final_text(self, which: int) -> str:
        if which > 0 and self.script.conversations[which - 1].final_text is not None:
            return str(self.script.conversations[which - 1].final_text)
        return self.script.final_text

    def _walk(
        self, which: int, body: Mapping[str, Any]
    ) -> tuple[int, Step | None, float, list[str]]:
        """Consume stalls, holds and met expects up to the step that answers this request.

        Returns its index, the step (None once the script is used up), the seconds
        stalled on the way, and why an expect is unmet (the cursor then stays on it,
        so every later request fails the same way). The gates held on go to
        ``self._held``, waited on outside the lock.
        """
        steps = self._steps[which]
        stalled = 0.0
        self._held: list[str] = []
        while self._cursors[which] < len(steps):
            cursor = self._cursors[which]
            step = steps[cursor]
            if step.stall is not None:
                stalled += step.stall
            elif step.hold is not None:
                self._held.append(step.hold)
            elif step.expect is not None:
                reasons = unmet(step.expect, body)
                if reasons:
                    return cursor, step, stalled, reasons
            else:
                self._cursors[which] += 1
                return cursor, step, stalled, []
            self._cursors[which] += 1
        return len(steps), None, stalled, []

    def answer(self, body: Mapping[str, Any], *, path: str) -> Reply:
        """Journal this request and decide its reply; stalls are slept outside the lock."""
        with self._lock:
            self._count += 1
            number = self._count
            chosen = pick_conversation(self.script, body)
            which = 0 if chosen is None else chosen + 1
            cursor, step, stalled, reasons = self._walk(which, body)
            gates = [self._gate(name) for name in self._held]
            entry: dict[str, Any] = {
                "n": number,
                "at": self._clock(),
                "path": path,
                "stream": bool(body.get("stream", False)),
                "model": body.get("model"),
                "conversation": self._name(which),
                "stalled": stalled,
                "held": list(self._held),
                "request": dict(body),
            }
            if reasons:
                message = (
                    f"scripted model: expect at step {cursor} of conversation "
                    f"{self._name(which)!r} not met: {'; '.join(reasons)}"
                )
                self._failures.append(
                    {
                        "n": number,
                        "conversation": self._name(which),
                        "step": cursor,
                        "reasons": reasons,
                    }
                )
                reply = _error_reply(400, message)
                entry.update(step=cursor, kind="expect", status=400, error=message, response=[])
            else:
                reply = self._reply(step, number, which, body)
                entry.update(
                    step=None if step is None else cursor,
                    kind="final" if step is None else step.kind,
                    status=reply.status,
                    error=reply.message or None,
                    response=reply.content,
                )
            self._journal.append(entry)
        for gate in gates:  # released, or the server stops, or HOLD_SECONDS pass
            gate.wait(HOLD_SECONDS)
        if stalled:
            self._sleep(stalled)
        return replace(reply, number=number)

    def _reply(self, step: Step | None, number: int, which: int, body: Mapping[str, Any]) -> Reply:
        if step is None:
            return Reply(content=[{"type": "text", "text": self._final_text(which)}])
        if step.status is not None:
            return Reply(
                status=step.status,
                error_type=step.error_type or ERROR_TYPES.get(step.status, "api_error"),
                message=step.message or f"scripted HTTP {step.status}",
                headers=dict(step.headers or {}),
            )
        if step.sse_error is not None:
            message = step.message or f"scripted {step.sse_error}"
            if not body.get("stream"):
                # A plain JSON request cannot fail mid-stream: fail it as a whole.
                return _error_reply(529, message, step.sse_error)
            return Reply(sse_error=True, error_type=step.sse_error, message=message)
        if step.text is not None:
            blocks = [Block(text=step.text)]
        elif step.tool_use is not None:
            blocks = [Block(tool_use=step.tool_use)]
        else:
            blocks = list(step.blocks or [])
        return Reply(content=[_content(block, number, i) for i, block in enumerate(blocks)])


def _content(block: Block, number: int, index: int) -> dict[str, Any]:
    if block.tool_use is None:
        return {"type": "text", "text": block.text or ""}
    return {
        "type": "tool_use",
        "id": block.tool_use.id or f"toolu_scripted_{number:04d}_{index}",
        "name": block.tool_use.name,
        "input": dict(block.tool_use.input),
    }


# --- wire format ---------------------------------------------------------------


def message_json(reply: Reply, *, number: int, model: str) -> dict[str, Any]:
    return {
        "id": f"msg_scripted_{number:04d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": reply.content,
        "stop_reason": reply.stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 20},
    }


def error_json(reply: Reply) -> dict[str, Any]:
    return {"type": "error", "error": {"type": reply.error_type, "message": reply.message}}


def _halves(text: str) -> list[str]:
    # Two deltas per block, so clients really assemble partial input.
    middle = len(text) // 2
    return [part for part in (text[:middle], text[middle:]) if part] or [""]


def sse_events(reply: Reply, *, number: int, model: str) -> Iterator[tuple[str, dict[str, Any]]]:
    start = message_json(reply, number=number, model=model)
    start.update(content=[], stop_reason=None, usage={"input_tokens": 100, "output_tokens": 1})
    yield "message_start", {"type": "message_start", "message": start}
    if reply.sse_error:
        yield "error", error_json(reply)
        return
    for index, block in enumerate(reply.content):
        if block["type"] == "text":
            opening: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": part} for part in _halves(block["text"])]
        else:
            opening = {**block, "input": {}}
            encoded = json.dumps(block["input"])
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in _halves(encoded)]
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": opening},
        )
        for delta in deltas:
            yield (
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": 20},
        },
    )
    yield "message_stop", {"type": "message_stop"}


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    # HTTP/1.0: one response per connection, so a stream ends when we close.
    protocol_version = "HTTP/1.0"

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)

    def _send_json(self, status: int, payload: Any, headers: Mapping[str, str] = {}) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", "req_scripted")
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _read_body(self) -> bytes:
        return read_body(self.headers, self.rfile)

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        player = self.server.player
        if path.startswith("/_model/") and not hmac.compare_digest(
            (self.headers.get(ADMIN_HEADER) or "").encode(), self.server.admin_secret.encode()
        ):
            # The journal holds every prompt and tool result: for tests, not for the agent.
            self._send_json(401, error_json(_error_reply(401, f"{ADMIN_HEADER} is required")))
        elif path == "/_model/journal":
            self._send_json(200, player.journal())
        elif path == "/_model/failures":
            self._send_json(200, player.failures())
        else:
            self._send_json(404, error_json(_error_reply(404, f"no route GET {path}")))

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        raw = self._read_body()
        if path == "/v1/messages/count_tokens":
            self._send_json(200, {"input_tokens": 100})
            return
        if path != "/v1/messages":
            self._send_json(404, error_json(_error_reply(404, f"no route POST {path}")))
            return
        try:
            body = json.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise ValueError("the body is not a JSON object")
        except ValueError as error:
            self._send_json(400, error_json(_error_reply(400, f"invalid JSON body: {error}")))
            return
        player = self.server.player
        reply = player.answer(body, path=path)
        number = reply.number
        model = str(body.get("model") or "scripted")
        if reply.status != 200:
            self._send_json(reply.status, error_json(reply), reply.headers)
        elif not body.get("stream"):
            self._send_json(200, message_json(reply, number=number, model=model))
        else:
            self._stream(reply, number=number, model=model)

    def _stream(self, reply: Reply, *, number: int, model: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("request-id", "req_scripted")
        self.end_headers()
        try:
            for event, data in sse_events(reply, number=number, model=model):
                self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away (killed mid-stream): nothing left to say


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, port: int, player: Player, verbose: bool, admin_secret: str) -> None:
        self.player = player
        self.verbose = verbose
        self.admin_secret = admin_secret
        super().__init__(("127.0.0.1", port), _Handler)


class ModelServer:
    """The scripted model in-process: ``url = ModelServer(script).start()``; ``stop()``.

    ``sleep`` replaces real waiting for ``stall`` steps; by default a stall
    waits on real time but ends at once when the server stops.
    """

    def __init__(
        self,
        script: Script | Mapping[str, Any] | str | Path,
        *,
        port: int = 0,
        sleep: Callable[[float], object] | None = None,
        verbose: bool = False,
        admin_secret: str | None = None,
    ) -> None:
        self.script = script if isinstance(script, Script) else load_script(script)
        self._stopping = threading.Event()
        self.player = Player(self.script, sleep or self._stopping.wait)
        self.admin_secret = admin_secret or secrets.token_hex(16)
        self._server = _Server(port, self.player, verbose, self.admin_secret)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> str:
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},  # so stop() returns promptly
            name="scripted-model",
            daemon=True,
        )
        self._thread.start()
        return self.url

    def release(self, gate: str) -> None:
        """Answer the requests a ``hold`` step keeps on ``gate``, and any to come."""
        self.player.release(gate)

    def release_all(self) -> None:
        self.player.release_all()

    def stop(self) -> None:
        self._stopping.set()
        self.player.release_all()
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=10)
            self._thread = None
        self._server.server_close()

    def journal(self) -> list[dict[str, Any]]:
        return self.player.journal()

    def failures(self) -> list[dict[str, Any]]:
        return self.player.failures()

    def unreached(self) -> list[dict[str, Any]]:
        return self.player.unreached()

    def __enter__(self) -> ModelServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_forever(port: int, script: Script | Mapping[str, Any] | str | Path) -> int:
    """``tusk sandbox model``: print the base URL first, then serve until interrupted."""
    server = ModelServer(
        script, port=port, verbose=True, admin_secret=os.environ.get(ADMIN_SECRET_ENV)
    )
    print(server.url, flush=True)
    try:
        server._server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server._stopping.set()
        server._server.server_close()
        print(f"scripted model stopped after {len(server.journal())} request(s)", file=sys.stderr)
    return 0
