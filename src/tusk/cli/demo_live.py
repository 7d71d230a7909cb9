"""``tusk demo --live``: the demo's flow on real GitHub.

It opens the demo issue on a repository you name, with the mention in its
body, polls (``tusk poll --once``, as the scheduled workflow would) until the
mention is dispatched, and waits until the control repository's agent
workflow closes the job's log issue.

It needs only what it uses on this machine: the poller's two tokens
(``TUSK_BOT_TOKEN`` reads, ``TUSK_DISPATCH_TOKEN`` dispatches and opens the
demo issue). The agent's tokens and the Anthropic key are secrets of the
control repository, used by its workflows. Before writing anything it checks
that the account opening the issue may start work (``allowed_users``),
since otherwise the poller would skip the mention and the demo would only
time out. The log issue is found by the job id of the demo issue's body (its
hidden marker), never by a title that ``#1`` shares with ``#12``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tusk.contracts.config import Settings
from tusk.errors import UserError
from tusk.github.gateway import Gateway
from tusk.issues.log_issue import LogIssue, find_log_issues
from tusk.poller.authorization import is_allowed
from tusk.poller.jobids import job_id

DEMO_TITLE = "Tusk demo: a typo to fix"
POLL_PAUSE_SECONDS = 60.0  # GitHub's X-Poll-Interval
# The secrets --live uses here; the rest live in the control repository.
LIVE_SECRETS = ("bot_token", "dispatch_token")


def demo_body(bot: str) -> str:
    return f"@{bot} please fix any typo you find in README.md and open a PR."


def check_opener(gateway: Gateway, settings: Settings) -> str:
    """The login that will open the demo issue; refused unless its mention starts work."""
    login = str(gateway.get("/user")["login"])
    if login.lower() == settings.bot.lower():
        raise UserError(
            f"TUSK_DISPATCH_TOKEN belongs to the bot ({login}); the bot's own text never "
            "starts work",
            "Export as TUSK_DISPATCH_TOKEN the control repository owner's token, as the "
            "poller uses it.",
        )
    if not is_allowed(login, settings.allowed_users):
        raise UserError(
            f"{login} would open the demo issue but is not in allowed_users "
            f"({', '.join(settings.allowed_users)}); the poller would skip the mention",
            f"Add {login} to allowed_users in tusk.yml (the control repository's copy too), "
            "or export the token of an allowed user as TUSK_DISPATCH_TOKEN.",
        )
    return login


def demo_jobid(repo: str, number: int) -> str:
    """The job id of the demo issue's body mention, as the poller derives it."""
    return job_id(repo, "issue_body", str(number))


def find_demo_log(
    gateway: Gateway, settings: Settings, *, repo: str, number: int
) -> LogIssue | None:
    """The log issue holding the demo's job: its marker names the job id exactly."""
    claims = [
        issue
        for issue in find_log_issues(gateway, settings, jobid=demo_jobid(repo, number), state="all")
        if not issue.failure and issue.state_reason != "duplicate"
    ]
    return claims[0] if claims else None


def poll_once(config: Path, state: Path) -> int:
    """``tusk poll --once`` in its own process, as the scheduled workflow runs it."""
    command = [sys.executable, "-m", "tusk.cli.main", "poll", "--once", "--config", str(config)]
    return subprocess.run([*command, "--state", str(state)], check=False).returncode


def wait_for_run(
    check: Callable[[], LogIssue | None],
    poll: Callable[[], object],
    *,
    timeout_seconds: float,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> LogIssue | None:
    """Poll until the job's log issue is closed; None when the time is up."""
    deadline = clock() + timeout_seconds
    while True:
        poll()
        found = check()
        if found is not None and found.state == "closed":
            return found
        if clock() >= deadline:
            return None
        sleep(POLL_PAUSE_SECONDS)


def run_live(
    args: argparse.Namespace,
    *,
    poll: Callable[[Path, Path], object] = poll_once,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    from tusk.contracts.config import load_secrets, load_settings, resolve_config_path
    from tusk.github.gateway import gateway_from_secrets

    if not args.repo:
        raise UserError(
            "--live needs --repo owner/name", "Name a repository you may open issues on."
        )
    config = resolve_config_path(args.config)
    settings = load_settings(config)
    secrets = load_secrets()
    secrets.require(*LIVE_SECRETS)  # names every missing one at once
    opener = gateway_from_secrets(secrets, "dispatch")
    login = check_opener(opener, settings)
    issue = opener.post(
        f"/repos/{args.repo}/issues",
        json={"title": DEMO_TITLE, "body": demo_body(settings.bot)},
        may_repeat=False,
    ).body
    number = int(issue["number"])
    print(f"{login} opened {issue['html_url']}; polling until its run is done", flush=True)
    with tempfile.TemporaryDirectory(prefix="tusk-demo-live-") as folder:
        state = Path(folder) / "poll-state.json"
        found = wait_for_run(
            lambda: find_demo_log(opener, settings, repo=args.repo, number=number),
            lambda: poll(config, state),
            timeout_seconds=args.timeout_minutes * 60,
            sleep=sleep,
            clock=clock,
        )
    if found is None:
        print(
            "Timed out waiting for the agent run; look at the control repository's Actions tab "
            f"and its log issues for job {demo_jobid(args.repo, number)}.",
            flush=True,
        )
        return 1
    print(f"The run finished: {found.url} ({found.state_reason})", flush=True)
    return 0 if found.state_reason == "completed" else 1
