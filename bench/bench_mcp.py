"""MCP server overhead: what policy + audit cost per call, next to the GitHub round trip.

Prints figures, asserts nothing. Run: ``python bench/bench_mcp.py [--calls N]``.

- policy + audit per write: check_write, prepare_body (secrets, mentions,
  footer), record_write and one hash-chained audit append (with its fsync-free
  file append), averaged over N distinct writes;
- the same for a read: throttle, audit append, loop bookkeeping, redaction;
- the loopback round trip of one GitHub call, twice: against the local
  GitHub (which validates every request and response against GitHub's
  OpenAPI description, so it is slow) and against a bare stdlib HTTP server
  answering a canned issue (the strict denominator);
- calls per second sustained through the real server: the SDK client over
  streamable HTTP, the server, the local GitHub.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from pydantic import SecretStr
from tusk.mcp_server import policy
from tusk.mcp_server import server as mcp_server
from tusk.mcp_server.loops import LoopDetector
from tusk.mcp_server.policy import PolicyConfig, RunState
from tusk.mcp_server.throttle import SlidingWindow

from tusk.audit import AuditLog, digest
from tusk.config import Settings
from tusk.contracts import Blocklist, ContextDocument, PermissionConfig, Trigger
from tusk.github import Gateway

AGENT = "bench-agent-token-0123456789"
READ = "bench-read-token-0123456789"
NOW = datetime(2026, 1, 1, tzinfo=UTC)
ISSUE_BODY = "A realistic issue body. " * 40

SCENARIO: dict[str, Any] = {
    "users": [{"login": "tusk-bot"}, {"login": "alice"}],
    "tokens": {
        AGENT: {"user": "tusk-bot", "scopes": ["repo"]},
        READ: {"user": "tusk-bot", "scopes": ["repo"], "read_only": True},
    },
    "repos": [
        {
            "name": "alice/widgets",
            "default_branch": "main",
            "branches": [{"name": "main"}],
            "issues": [
                {
                    "number": n,
                    "author": "alice",
                    "title": f"Issue {n}",
                    "body": ISSUE_BODY,
                    "comments": [{"author": "alice", "body": "a comment " * 20}] * 5,
                }
                for n in range(1, 4)
            ],
        }
    ],
}


def timed(fn: Callable[[], Any], n: int) -> list[float]:
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return samples


def ms(samples: list[float]) -> str:
    mean, median = statistics.fmean(samples) * 1e3, statistics.median(samples) * 1e3
    return f"mean {mean:.3f} ms, median {median:.3f} ms"


def policy_config() -> PolicyConfig:
    return PolicyConfig(
        bot="tusk-bot",
        jobid="job-bench",
        control_repo="alice/tusk-control",
        trigger_repo="alice/widgets",
        trigger_number=1,
        log_issue_url="https://github.com/alice/tusk-control/issues/1",
        permissions=PermissionConfig(comments_per_thread=10**9),
        writes_per_run=10**9,  # the limits are not what is measured
    )


def bench_policy_write(n: int, folder: Path) -> list[float]:
    config, state = policy_config(), RunState()
    log = AuditLog(folder / "write-audit.jsonl")
    counter = iter(range(10**9))
    secrets = (AGENT, READ)

    def one() -> None:
        i = next(counter)
        args = {"repo": "alice/widgets", "number": 1 + i % 3, "body": f"{ISSUE_BODY} @alice #{i}"}
        policy.check_write("create_comment", args, config, state)
        policy.prepare_body(args["body"], config, secrets=secrets)
        policy.record_write("create_comment", args, config, state, comment_id=i)
        log.append(
            tool="create_comment",
            kind="write",
            target="alice/widgets#1",
            args=args,
            decision="allowed",
            url=f"https://github.com/alice/widgets/issues/1#c{i}",
            created="comment",
        )

    return timed(one, n)


def bench_policy_read(n: int, folder: Path) -> list[float]:
    log = AuditLog(folder / "read-audit.jsonl")
    throttle = SlidingWindow(limit=10**9, window=60)
    loops = LoopDetector(6)
    result = json.dumps(SCENARIO["repos"][0]["issues"][0])
    counter = iter(range(10**9))

    def one() -> None:
        i = next(counter)
        args = {"repo": "alice/widgets", "number": 1 + i % 3}
        throttle.try_acquire()
        text = result
        for secret in (AGENT, READ):
            text = text.replace(secret, "[redacted]")
        log.append(
            tool="get_issue", kind="read", target="alice/widgets", args=args, decision="allowed"
        )
        loops.observe("get_issue", digest(args), digest(text))

    return timed(one, n)


class _Canned(BaseHTTPRequestHandler):
    body = json.dumps(SCENARIO["repos"][0]["issues"][0]).encode()

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: Any) -> None:
        pass


def bench_bare_round_trip(n: int) -> list[float]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Canned)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    gateway = Gateway(
        api_url=f"http://127.0.0.1:{server.server_address[1]}",
        token=SecretStr(READ),
        token_name="read",
    )
    gateway.get("/repos/alice/widgets/issues/1")  # warm the connection
    samples = timed(lambda: gateway.get("/repos/alice/widgets/issues/1"), n)
    server.shutdown()
    return samples


async def sustained(url: str, seconds: float) -> tuple[int, int, float]:
    from mcp import Client

    reads = writes = 0
    start = time.perf_counter()
    async with Client(url) as client:
        while time.perf_counter() - start < seconds:
            result = await client.call_tool(
                "get_issue", {"repo": "alice/widgets", "number": 1 + reads % 3}
            )
            assert not result.is_error, result.content
            reads += 1
            result = await client.call_tool(
                "create_comment",
                {"repo": "alice/widgets", "number": 1 + writes % 3, "body": f"bench {writes}"},
            )
            assert not result.is_error, result.content
            writes += 1
    return reads, writes, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="samples per micro-benchmark")
    parser.add_argument("--seconds", type=float, default=5.0, help="duration of the sustained run")
    args = parser.parse_args()

    from tusk.sandbox.github_server import start_server
    from tusk.sandbox.testing import LocalGitHub

    with tempfile.TemporaryDirectory() as folder_name:
        folder = Path(folder_name)
        write = bench_policy_write(args.calls, folder)
        read = bench_policy_read(args.calls, folder)
        bare = bench_bare_round_trip(min(args.calls, 500))

        running = start_server(port=0, strict=True)
        try:
            github = LocalGitHub(running.url, running.app.admin_secret)
            github.load(SCENARIO)
            read_gw, write_gw = github.gateway(READ), github.gateway(AGENT)
            read_gw.get("/repos/alice/widgets/issues/1")
            local_get = timed(
                lambda: read_gw.get("/repos/alice/widgets/issues/1"), min(args.calls, 300)
            )
            counter = iter(range(10**9))
            local_post = timed(
                lambda: write_gw.post(
                    "/repos/alice/widgets/issues/2/comments", json={"body": f"rt {next(counter)}"}
                ),
                100,
            )

            settings = Settings.model_validate(
                {
                    "bot": "tusk-bot",
                    "control_repo": "alice/tusk-control",
                    "allowed_users": ["alice"],
                    "limits": {
                        "comments_per_thread": 10**6,
                        "reads_per_window": 10**6,
                        "writes_per_run": 10**6,
                    },
                }
            )
            context = ContextDocument(
                jobid="job-bench",
                repo="alice/widgets",
                actor="alice",
                trust_level="owner",
                permission_config=PermissionConfig(comments_per_thread=10**6),
                trigger=Trigger(
                    type="issue_comment",
                    id="1",
                    url="u",
                    number=1,
                    author="alice",
                    body="b",
                    created_at=NOW,
                ),
                raw={},
                timestamp=NOW,
            )
            config = mcp_server.policy_config(
                settings,
                context,
                log_issue_url="https://github.com/alice/tusk-control/issues/1",
                blocklist=Blocklist(),
            )
            runtime = mcp_server.build_runtime(
                settings=settings,
                config=config,
                scope=mcp_server.read_scope(settings, context),
                read_gateway=read_gw,
                write_gateway=write_gw,
                run_dir=folder / "run",
                secrets=(SecretStr(AGENT), SecretStr(READ)),
            )
            url, stop = mcp_server.start_in_thread(mcp_server.build_server(runtime))
            try:
                reads, writes, elapsed = asyncio.run(sustained(url, args.seconds))
            finally:
                stop()
        finally:
            running.stop()

    w, r = statistics.fmean(write), statistics.fmean(read)
    print("MCP server overhead (policy + audit), per call")
    print(f"  write path (check, body, record, audit append): {ms(write)}")
    print(f"  read path (throttle, redact, audit append, loop): {ms(read)}")
    print("GitHub round trip on loopback")
    print(f"  bare HTTP server, canned issue (GET):    {ms(bare)}")
    print(f"  local GitHub, spec-validated (GET):      {ms(local_get)}")
    print(f"  local GitHub, spec-validated (POST):     {ms(local_post)}")
    print("Overhead as a share of the round trip (goal < 2%)")
    print(f"  write vs local GitHub POST: {100 * w / statistics.fmean(local_post):.2f}%")
    print(f"  read  vs local GitHub GET:  {100 * r / statistics.fmean(local_get):.2f}%")
    print(f"  write vs bare loopback GET: {100 * w / statistics.fmean(bare):.2f}%  (strict bound)")
    print(f"  read  vs bare loopback GET: {100 * r / statistics.fmean(bare):.2f}%  (strict bound)")
    print("Sustained through the real server (SDK client, streamable HTTP, local GitHub)")
    print(
        f"  {reads + writes} calls in {elapsed:.1f} s: {(reads + writes) / elapsed:.1f} calls/s "
        f"({reads} reads, {writes} writes)"
    )
    per_call = elapsed / (reads + writes) * 1e3
    github_part = (statistics.fmean(local_get) + statistics.fmean(local_post)) / 2 * 1e3
    print(f"  per call {per_call:.1f} ms, of which about {github_part:.1f} ms is the local GitHub")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
