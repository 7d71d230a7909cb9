"""``tusk go-away``: the CLI edge of the go-away action (MISSION G1-G3).

Reads the ``tusk-go-away`` dispatch, checks on GitHub that its actor really
wrote the go-away comment, claims the run's log issue (a repeated
delivery of the same job stops here), blocks, cleans up, writes what happened
into the log issue and closes it as ``not_planned``. Exits 1 when anything
failed, after everything that could be done was done and reported.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from pydantic import Field

from tusk import actions_edge
from tusk.contracts import commands
from tusk.contracts.config import (
    Settings,
    load_secrets,
    load_settings,
    resolve_config_path,
)
from tusk.contracts.inputs import API_URL, OLD_API_URL, StepInputs, config_input, or_runner
from tusk.contracts.models import Blocklist, GoAwayRequest
from tusk.errors import InputError
from tusk.github.gateway import Gateway, gateway_from_secrets
from tusk.issues.go_away_records import go_away_record
from tusk.issues.log_issue import claim_log_issue, log_marker
from tusk.issues.state import StateStore
from tusk.steps.go_away import plan
from tusk.steps.go_away.cleanup import GoAwayRun
from tusk.steps.go_away.verify import verify
from tusk.text.markers import first_marker, render_marker
from tusk.text.render import render

NO_REACTION = "none"


class Inputs(StepInputs):
    """The inputs of actions/go-away."""

    read_elsewhere: ClassVar[dict[str, str]] = {
        "agent-token": "TUSK_AGENT_TOKEN",
        **API_URL,
        **OLD_API_URL,
    }

    config: str = config_input()
    reaction: str = Field(
        "",
        description=f"reaction on the go-away comment, overriding go_away.reaction; "
        f"'{NO_REACTION}' for none; empty: tusk.yml's",
    )
    payload: str = or_runner(
        "payload",
        "GITHUB_EVENT_PATH",
        description="file holding the go-away client_payload (or the whole event); empty: the "
        "event",
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    Inputs.add_arguments(parser)


def read_request(path: Path) -> GoAwayRequest:
    """The request from a payload file or a whole ``repository_dispatch`` event."""
    return commands.read_request(commands.GO_AWAY, path)


def reaction_of(inputs: Inputs, settings: Settings) -> str | None:
    if not inputs.reaction:
        return settings.go_away.reaction
    if inputs.reaction == NO_REACTION:
        return None
    # Validated the same way as the config key.
    return type(settings.go_away)(reaction=inputs.reaction).reaction


def run(args: argparse.Namespace) -> int:
    inputs = Inputs.from_args(args)
    if not inputs.payload:
        raise InputError(
            "no go-away payload to read",
            "Give --payload FILE, or run inside the tusk-go-away repository_dispatch workflow.",
        )
    request = read_request(Path(inputs.payload))
    settings = load_settings(resolve_config_path(inputs.config))
    if request.actor.lower() == settings.bot.lower():
        raise InputError(
            "the bot cannot send itself away",
            "The poller never dispatches for the bot's own comments; check the payload.",
        )
    reaction = reaction_of(inputs, settings)
    gateway = gateway_from_secrets(load_secrets(), "agent")
    return execute(request, gateway=gateway, settings=settings, reaction=reaction)


def execute(
    request: GoAwayRequest,
    *,
    gateway: Gateway,
    settings: Settings,
    reaction: str | None,
    sleep: Callable[[float], object] = time.sleep,
) -> int:
    """Everything after the inputs are read; tests call this with their own gateway."""
    # The payload decides what is blocked and deleted: read the comment back first.
    verified = verify(gateway, request, bot=settings.bot, phrase=settings.go_away.phrase)
    request = verified.request
    marker = log_marker(request.jobid, request.repo)
    claim = claim_log_issue(
        gateway,
        settings,
        jobid=request.jobid,
        title=plan.log_title(request),
        body=render(
            "go_away_log.md.j2", marker=marker, report=_empty(request, settings), finished=False
        ),
        labels=[settings.labels.workflow],
        repo=request.repo,
    )
    if not claim.won:
        left = _left_to_do(gateway, settings, request, claim.number)
        if left is None:
            print(f"job {request.jobid}: already handled in {claim.url}; nothing to do", flush=True)
            actions_edge.set_outputs({"log-issue-url": claim.url, "handled": False, "failures": 0})
            return 0
        print(f"job {request.jobid}: {left}; finishing what is left", flush=True)
    report = GoAwayRun(
        request,
        gateway=gateway,
        settings=settings,
        update_blocklist=StateStore(gateway, settings).update_blocklist,
        sleep=sleep,
        reaction=reaction,
        author_association=verified.author_association,
    ).run(log_issue_number=claim.number)
    _record(gateway, settings, request, claim.number, report, first=claim.won)
    body = render("go_away_log.md.j2", marker=marker, report=report, finished=True)
    _report(report, body=body, log_issue_url=claim.url)
    return 1 if report.failures else 0


def outcome_marker(request: GoAwayRequest, report: plan.GoAwayReport) -> str:
    """What a finished go-away left undone (``_left_to_do`` reads it) and the entries it
    blocked (a blocklist issue that is gone is rebuilt from them)."""
    blocked = None
    if report.scope is not None and report.blocklist_updated:
        blocked = plan.apply_scope(
            Blocklist(), report.scope, at=request.timestamp, source_url=request.comment_url
        )
    return go_away_record(request.jobid, len(report.failures), blocked)


def _left_to_do(
    gateway: Gateway, settings: Settings, request: GoAwayRequest, number: int
) -> str | None:
    """Why a run of a job already claimed goes on, or None: the bot finished the job
    (closed its log issue) and recorded problems, so running it again finishes what is
    left (every step removes only what is still there). A claim still open is being
    handled by its own run; one that finished cleanly leaves nothing to do."""
    item = gateway.get(f"/repos/{settings.control_repo}/issues/{number}")
    closer = str((item.get("closed_by") or {}).get("login") or "")
    status = first_marker(item.get("body"), "go-away") or {}
    finished = item.get("state") == "closed" and closer.lower() == settings.bot.lower()
    failures = status.get("failures")
    if not finished or status.get("jobid") != request.jobid or not isinstance(failures, int):
        return None
    if failures <= 0:
        return None
    return f"its run #{number} ended with {failures} problem(s)"


def _record(
    gateway: Gateway,
    settings: Settings,
    request: GoAwayRequest,
    number: int,
    report: plan.GoAwayReport,
    *,
    first: bool,
) -> None:
    """The report in the job's log issue, which is closed as not planned. A run that
    finishes an earlier one's work adds its report as a comment, so the first report
    stays, and the outcome marker in the body says what is left now."""
    path = f"/repos/{settings.control_repo}/issues/{number}"
    status = outcome_marker(request, report)
    if first:
        marker = f"{log_marker(request.jobid, request.repo)}\n{status}"
        body = render("go_away_log.md.j2", marker=marker, report=report, finished=True)
        gateway.patch(
            path,
            json={"body": plan.fit_body(body), "state": "closed", "state_reason": "not_planned"},
        )
        return
    again = render("go_away_log.md.j2", marker="", report=report, finished=True)
    note = f"**Run again for this job** (it finishes what was left):\n\n{again}"
    # No marker to find it by: a courtesy for people, sent once and never repeated.
    gateway.post(f"{path}/comments", json={"body": plan.fit_body(note)}, may_repeat=False)
    body = str(gateway.get(path).get("body") or "")
    old = first_marker(body, "go-away")
    if old is not None:
        body = body.replace(render_marker("go-away", old), status, 1)
    gateway.patch(path, json={"body": body})


def _report(report: plan.GoAwayReport, *, body: str, log_issue_url: str) -> None:
    """What was done, in the step's annotations, summary, log and outputs."""
    for failure in report.failures:
        actions_edge.error(failure.what, detail=f"{failure.error}\nTo do: {failure.todo}")
    actions_edge.append_summary(body)
    blocked_repos = [r.repo for r in report.repos if not r.skipped]
    print(
        f"job {report.request.jobid}: {len(blocked_repos)} repositories cleaned, "
        f"{report.removed_count} items removed, {len(report.failures)} problem(s); "
        f"{log_issue_url}",
        flush=True,
    )
    actions_edge.set_outputs(
        {
            "log-issue-url": log_issue_url,
            "handled": True,
            "blocked-repos": " ".join(report.newly_blocked_repos),
            "blocked-users": " ".join(report.newly_blocked_users),
            "removed": report.removed_count,
            "failures": len(report.failures),
        }
    )


def _empty(request: GoAwayRequest, settings: Settings) -> plan.GoAwayReport:
    return plan.GoAwayReport(request=request, bot=settings.bot)
