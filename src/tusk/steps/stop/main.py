"""``tusk stop``: the CLI edge of the stop action (MISSION C2).

Reads the ``tusk-stop`` dispatch, checks on GitHub that its actor really wrote
``@bot stop`` on that thread, claims the stop's own log issue (a repeated
delivery stops here: exactly once), finds the run in flight on the thread from
the log issues (``tusk.issues.thread_runs``), and checks that the actor asked
for that run or that GitHub confirms their write access (``tusk.github.rights``).
Then it records the stop on the run's log issue (``tusk.issues.stop_record``):
the run sees it within the blocklist-check interval, its MCP server refuses every
further write and the session ends; the write-up runs, the log issue closes as
completed, saying who stopped it. Nothing is blocked: the bot stays allowed.
Anyone else is refused with one reply, and a thread with nothing in flight is told
so once.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from tusk import actions_edge
from tusk.contracts import commands
from tusk.contracts.config import Settings, load_secrets, load_settings, resolve_config_path
from tusk.contracts.models import StopRequest
from tusk.errors import InputError, UserError
from tusk.github.gateway import Gateway, GitHubError, NotFound, gateway_from_secrets
from tusk.github.once import post_marked_comment
from tusk.github.reactions import rest_path
from tusk.github.rights import confirmed_rights
from tusk.issues import stop_record
from tusk.issues.followups import thread_key
from tusk.issues.log_issue import claim_command_issue, log_marker
from tusk.issues.thread_runs import run_in_flight
from tusk.text.commands import asks_to_stop
from tusk.text.markers import render_marker

THREAD_IN_URL = re.compile(r"/(?:issues|pull)/(?P<number>\d+)(?:$|[/#?])")
REST_ID = re.compile(r"\d{1,20}")
FORGED_HINT = (
    "Nothing was stopped. The poller dispatches stop only for a comment that says it; "
    "check who can send repository_dispatch to the control repository."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--payload",
        help="file holding the stop client_payload (or the whole event); "
        "default: $GITHUB_EVENT_PATH",
    )
    parser.add_argument("--config", help="tusk.yml; default: $TUSK_CONFIG or ./tusk.yml")


def run(args: argparse.Namespace) -> int:
    source = args.payload or os.environ.get("GITHUB_EVENT_PATH")
    if not source:
        raise InputError("no stop payload to read", "Give --payload FILE, or run in the workflow.")
    request = commands.read_request(commands.STOP, Path(source))
    settings = load_settings(resolve_config_path(args.config))
    return execute(
        request, gateway=gateway_from_secrets(load_secrets(), "agent"), settings=settings
    )


@dataclass(frozen=True)
class Verified:
    request: StopRequest
    thread: int  # the issue or pull request number


def verify(gateway: Gateway, request: StopRequest, *, bot: str) -> Verified:
    """The comment the request names, read back from GitHub: the actor's, saying stop."""

    def refuse(why: str) -> UserError:
        return UserError(
            f"the stop request {request.comment_url} cannot be verified: {why}", FORGED_HINT
        )

    base, ident = f"/repos/{request.repo}", request.comment_id
    paths = {
        "issue_comment": f"{base}/issues/comments/{ident}",
        "review_comment": f"{base}/pulls/comments/{ident}",
        "issue_body": f"{base}/issues/{ident}",
        "pull_request_body": f"{base}/issues/{ident}",
    }
    if request.comment_type not in paths:
        raise refuse(f"stop works on issues and pull requests, not a {request.comment_type}")
    if not REST_ID.fullmatch(ident):
        raise refuse(f"{ident!r} is not a REST id")
    try:
        found = dict(gateway.get(paths[request.comment_type]))
    except NotFound as error:
        raise refuse(f"GitHub has no such {request.comment_type} in {request.repo}") from error
    author = str((found.get("user") or {}).get("login") or "")
    if author.lower() != request.actor.lower():
        raise refuse(f"it was written by `{author or 'ghost'}`, not `{request.actor}`")
    if not asks_to_stop(str(found.get("body") or ""), bot=bot):
        raise refuse(f"it does not say `@{bot} stop` (any more)")
    url = str(found.get("html_url") or request.comment_url)
    match = THREAD_IN_URL.search(url)
    if match is None:
        raise refuse("its URL names no issue or pull request")
    return Verified(request.model_copy(update={"comment_url": url}), int(match.group("number")))


def execute(request: StopRequest, *, gateway: Gateway, settings: Settings) -> int:
    verified = verify(gateway, request, bot=settings.bot)
    request = verified.request
    claim = claim_command_issue(
        gateway,
        settings,
        jobid=request.jobid,
        repo=request.repo,
        thread=verified.thread,
        actor=request.actor,
        verb="Stop",
        asked=f"🛑 Stop asked by `{request.actor}`: {request.comment_url}",
    )
    if claim is None:
        return 0
    key = thread_key(request.repo, verified.thread)
    holder = run_in_flight(gateway, settings, key) if key is not None else None
    refused: str | None = None
    said = ""
    if holder is None:
        refused = "no run of the bot is in flight on this thread, so there is nothing to stop"
    else:
        rights = confirmed_rights(
            gateway, request.actor, repos=[request.repo], requester=holder.requester
        )
        if not rights.allowed:
            refused = rights.refusal()
        else:
            stop = stop_record.StopRecord(request.actor, request.comment_url, rights.why)
            stop_record.record(
                gateway,
                control_repo=settings.control_repo,
                log_issue=holder.number,
                stop=stop,
                bot=settings.bot,
            )
            said = f"Stopped the run of {holder.url}: {rights.why}."
    finish(gateway, settings, request, claim.number, verified.thread, refused=refused, said=said)
    return 0


def finish(
    gateway: Gateway,
    settings: Settings,
    request: StopRequest,
    number: int,
    thread: int,
    *,
    refused: str | None,
    said: str,
) -> None:
    """The stop's own log issue says what happened and closes; the thread gets one reply
    when nothing was stopped; the request gets 🚀 or 😕."""
    body = (
        f"{log_marker(request.jobid, request.repo)}\n"
        f"🛑 Stop asked by `{request.actor}`: {request.comment_url}\n\n"
        + (f"**Refused**: {refused}" if refused else said)
        + "\n\nThe bot stays allowed here.\n"
    )
    gateway.patch(
        f"/repos/{settings.control_repo}/issues/{number}",
        json={
            "body": body,
            "state": "closed",
            "state_reason": "not_planned" if refused else "completed",
        },
    )
    if refused:
        reply_once(gateway, settings, request, thread, f"🛑 Nothing was stopped: {refused}")
    path = rest_path(request.repo, request.comment_type, request.comment_id, thread)
    if path is not None:  # a courtesy, like every reaction
        with contextlib.suppress(GitHubError):
            gateway.post(path, json={"content": "confused" if refused else "rocket"})
    actions_edge.set_outputs({"stopped": "" if refused else "true", "refused": refused or ""})
    print(f"stop {request.jobid}: " + (f"refused: {refused}" if refused else said), flush=True)


def reply_once(
    gateway: Gateway, settings: Settings, request: StopRequest, number: int, text: str
) -> None:
    """One reply per stop request, found again by its nonce."""
    body = f"{render_marker('stop-reply', {'nonce': request.jobid})}\n{text}\n"
    post_marked_comment(
        gateway,
        request.repo,
        number,
        body,
        kind="stop-reply",
        nonce=request.jobid,
        bot=settings.bot,
        look_first=True,
        what=f"the stop's reply on {request.repo}#{number}",
    )
