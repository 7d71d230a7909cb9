"""The gateway against PyGithub, on the local GitHub: why Tusk speaks HTTP itself.

Prints, for the same reads and writes done through ``tusk.github.gateway.Gateway``
and through PyGithub (the version pinned for the tests), with the same token
against the same local GitHub:

* requests to read an issue with 250 comments (PyGithub with its default
  page size of 30 and with ``per_page=100``);
* requests counted against the rate limit by one idle notifications poll
  (the gateway's conditional GET is answered 304, which GitHub does not
  count; PyGithub has no conditional listing);
* median milliseconds per ``GET`` of one issue, and the time to import
  PyGithub;
* a create whose answer is lost (the comment lands, the client sees a 502):
  how many comments exist afterwards.

Figures only; nothing is asserted. Run: ``python bench/bench_gateway.py``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import github
from pydantic import SecretStr

from tusk.github.gateway import Gateway, GitHubError
from tusk.sandbox.github_server import RunningServer, start_server
from tusk.sandbox.testing import LocalGitHub

REPO = "alice/widgets"
COMMENTS = 250
SCENARIO: dict[str, Any] = {
    "users": [{"login": "alice"}, {"login": "tusk-bot"}],
    "tokens": {"bot": {"user": "tusk-bot", "scopes": ["repo", "notifications"]}},
    "repos": [
        {
            "name": REPO,
            "files": {"README.md": "# Widgets\n"},
            "collaborators": {"tusk-bot": "write"},
            "issues": [
                {
                    "number": 1,
                    "author": "alice",
                    "title": "Typo",
                    "body": "@tusk-bot fix",
                    "comments": [
                        {"author": "alice", "body": f"comment {i}"} for i in range(COMMENTS)
                    ],
                }
            ],
        }
    ],
}


def gateway(running: RunningServer) -> Gateway:
    return Gateway(api_url=running.url, token=SecretStr("bot"), token_name="bot")


def pygithub(running: RunningServer, **kwargs: Any) -> github.Github:
    # Built the way the tests build it: PyGithub's own retry (GithubRetry) left on.
    return github.Github(
        base_url=running.url,
        auth=github.Auth.Token("bot"),
        retry=github.GithubRetry(total=4),
        seconds_between_requests=None,
        seconds_between_writes=None,
        **kwargs,
    )


def counted(local: LocalGitHub, action: Callable[[], object]) -> tuple[int, int]:
    """Requests sent by ``action``: (counted by GitHub, answered 304)."""
    before = len(local.journal())
    action()
    entries = local.journal()[before:]
    not_modified = sum(1 for entry in entries if entry.get("status") == 304)
    return len(entries) - not_modified, not_modified


def read_issue_requests(running: RunningServer, local: LocalGitHub) -> None:
    print(f"requests to read an issue and its {COMMENTS} comments (REST):")
    gw = gateway(running)
    sent, _ = counted(
        local,
        lambda: (
            gw.get(f"/repos/{REPO}/issues/1"),
            list(gw.paginate(f"/repos/{REPO}/issues/1/comments")),
        ),
    )
    print(f"  gateway (get + paginate, 100 a page)        {sent:3d}")
    # Pages after the first follow GitHub's Link to /repositories/{id}/...: the ledger
    # counts them under the operation's route, as the journal shows them sent.
    by_id = sum(1 for e in local.journal() if e["path"].startswith("/repositories/"))
    routes = ", ".join(f"{route} {n}" for route, n in sorted(gw.ledger.by_route.items()))
    print(f"    pages through /repositories/{{id}}: {by_id}; ledger: {routes}")
    for per_page in (30, 100):
        client = pygithub(running, per_page=per_page)

        def read(client: github.Github = client) -> None:
            issue = client.get_repo(REPO).get_issue(1)
            list(issue.get_comments())

        sent, _ = counted(local, read)
        print(f"  PyGithub (get_repo, get_issue, {per_page:3d} a page) {sent:3d}")


def idle_poll_requests(running: RunningServer, local: LocalGitHub) -> None:
    print("idle notifications poll, requests counted against the rate limit (and 304s):")
    gw = gateway(running)
    first = gw.conditional_get("/notifications")
    since = first.header("last-modified")
    sent, free = counted(
        local, lambda: gw.conditional_get("/notifications", if_modified_since=since)
    )
    print(f"  gateway (If-Modified-Since)                 {sent:3d} ({free} answered 304)")
    client = pygithub(running)
    sent, free = counted(local, lambda: list(client.get_user().get_notifications()))
    print(f"  PyGithub (get_user().get_notifications())   {sent:3d} ({free} answered 304)")


def time_per_call(running: RunningServer, count: int) -> None:
    gw = gateway(running)
    repo = pygithub(running).get_repo(REPO)

    def median_ms(call: Callable[[], object]) -> float:
        call()
        samples = []
        for _ in range(count):
            started = time.perf_counter()
            call()
            samples.append(time.perf_counter() - started)
        return statistics.median(samples) * 1000

    ours = median_ms(lambda: gw.get(f"/repos/{REPO}/issues/1"))
    theirs = median_ms(lambda: repo.get_issue(1))
    print(
        f"median ms per GET of one issue over {count} calls (the local GitHub's own time included):"
    )
    print(f"  gateway {ours:6.2f}   PyGithub {theirs:6.2f}   ratio {theirs / ours:4.2f}x")
    print(
        f"  importing PyGithub: {import_seconds('github'):.2f} s; "
        f"requests: {import_seconds('requests'):.2f} s (fastest of 3, interpreter start apart)"
    )


def import_seconds(module: str) -> float:
    """Seconds a fresh interpreter spends importing ``module`` (fastest of three)."""

    def run(code: str) -> float:
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        return time.perf_counter() - started

    bare = min(run("pass") for _ in range(3))
    return max(min(run(f"import {module}") for _ in range(3)) - bare, 0.0)


def lost_answer(running: RunningServer, local: LocalGitHub) -> None:
    print("a comment created whose answer is lost (it lands, the client sees a 502):")
    path = f"/repos/{REPO}/issues/1/comments"

    def comments() -> int:
        return len(list(gateway(running).paginate(path)))

    before = comments()
    local.add_fault("POST", r"/issues/1/comments$", status=502, lands=True)
    try:
        gateway(running).post(path, {"body": "once"}, may_repeat=False)
        outcome = "returned"
    except GitHubError as error:
        outcome = f"raised, may_have_landed={error.may_have_landed}"
    print(f"  gateway (may_repeat=False): {comments() - before} comment(s); {outcome}")
    before = comments()
    local.add_fault("POST", r"/issues/1/comments$", status=502, lands=True)
    try:
        pygithub(running).get_repo(REPO).get_issue(1).create_comment("once")
        outcome = "returned"
    except github.GithubException as error:
        outcome = f"raised {error.status}"
    print(f"  PyGithub (GithubRetry):     {comments() - before} comment(s); {outcome}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="calls timed per client")
    args = parser.parse_args()
    running = start_server(scenario=SCENARIO, strict=True)
    local = LocalGitHub(running.url, running.app.admin_secret)
    try:
        read_issue_requests(running, local)
        idle_poll_requests(running, local)
        time_per_call(running, args.calls)
        lost_answer(running, local)
    finally:
        local.close()
        running.stop()


if __name__ == "__main__":
    main()
