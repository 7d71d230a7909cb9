"""``tusk undo``: the CLI edge of the undo action (one run taken back).

Reads the ``tusk-undo`` dispatch, checks on GitHub that its actor really
wrote ``@bot undo`` on that thread, claims the undo's own log issue (a
repeated delivery stops here: exactly once), finds the latest run that still
has writes on the thread, checks that the actor asked for it or is a
collaborator, takes its writes back, records that on the run's log issue and
in its audit chain, and reports on the undo's log issue. The bot stays
allowed. Exits 1 when a write could not be taken back, after doing the rest.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tusk import actions_edge
from tusk.audit.chain import CreatedItem, created_items
from tusk.contracts.config import (
    Settings,
    describe_validation_errors,
    load_secrets,
    load_settings,
    resolve_config_path,
)
from tusk.contracts.models import UNDO_EVENT_TYPE, AuditRecord, UndoRequest
from tusk.errors import InputError
from tusk.github.gateway import Gateway, GitHubError, gateway_from_secrets
from tusk.github.reactions import rest_path
from tusk.issues.log_issue import claim_log_issue, log_marker, parse_log_issue
from tusk.steps.undo import plan
from tusk.steps.undo.on_log_issue import chain_of, record, run_comments
from tusk.steps.undo.take_back import take_back_all
from tusk.steps.undo.verify import VerifiedUndo, verify
from tusk.text.markers import first_marker


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--payload",
        help="file holding the undo client_payload (or the whole event); "
        "default: $GITHUB_EVENT_PATH",
    )
    parser.add_argument("--config", help="tusk.yml; default: $TUSK_CONFIG or ./tusk.yml")


def read_request(path: Path) -> UndoRequest:
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise InputError(f"cannot read the undo payload {path}", str(error)) from error
    if isinstance(data, dict) and "client_payload" in data:
        if data.get("action") not in (None, UNDO_EVENT_TYPE):
            raise InputError(
                f"the event is a {data.get('action')!r} dispatch, not {UNDO_EVENT_TYPE!r}",
                "Start undo only from the tusk-undo dispatch.",
            )
        data = data["client_payload"]
    try:
        return UndoRequest.model_validate(data)
    except ValidationError as error:
        problems = "\n".join(f"  - {p}" for p in describe_validation_errors(error))
        raise InputError("the undo payload is not a valid request", problems) from error


def run(args: argparse.Namespace) -> int:
    source = args.payload or os.environ.get("GITHUB_EVENT_PATH")
    if not source:
        raise InputError("no undo payload to read", "Give --payload FILE, or run in the workflow.")
    request = read_request(Path(source))
    settings = load_settings(resolve_config_path(args.config))
    return execute(
        request, gateway=gateway_from_secrets(load_secrets(), "agent"), settings=settings
    )


def thread_items(gateway: Gateway, repo: str, number: int) -> list[dict[str, Any]]:
    """The thread's comments, and its own body (an issue the run opened is undone too)."""
    body = dict(gateway.get(f"/repos/{repo}/issues/{number}"))
    comments = list(gateway.paginate(f"/repos/{repo}/issues/{number}/comments"))
    return [*comments, {**body, "id": 0}]


def find_run(
    gateway: Gateway, settings: Settings, verified: VerifiedUndo
) -> tuple[plan.RunOnThread, Any, list[dict[str, Any]]] | None:
    """The latest run with writes on the thread whose log issue is real and not undone:
    the run, its log issue, the bot's comments on it."""
    repo = verified.request.repo
    for run_found in plan.runs_on_thread(
        thread_items(gateway, repo, verified.thread), bot=settings.bot
    ):
        number = run_found.log_issue_url.rstrip("/").rsplit("/", 1)[-1]
        if not number.isdigit():
            continue
        try:
            item = dict(gateway.get(f"/repos/{settings.control_repo}/issues/{number}"))
        except GitHubError:
            continue
        log = parse_log_issue(item, settings)
        if log is None or log.jobid != run_found.jobid:
            continue  # a marker pointing elsewhere: not this run's log issue
        comments = run_comments(gateway, settings.control_repo, log.number, bot=settings.bot)
        if any(
            (first_marker(c.get("body"), "undo") or {}).get("jobid") == log.jobid for c in comments
        ):
            continue  # undone before
        return run_found, (log, first_marker(item.get("body"), "job") or {}), comments
    return None


def removals_of(
    run_found: plan.RunOnThread, repo: str, comments: list[dict[str, Any]]
) -> list[plan.Removal]:
    """What the audit says the run created, and the run's comments on the thread."""
    lines, _ = chain_of(comments)
    records = [AuditRecord.model_validate_json(line) for line in lines]
    on_thread = [
        plan.Removal("comment", repo, str(cid), f"{repo} comment {cid}")
        for cid in run_found.comment_ids
        if cid
    ]
    created: list[CreatedItem] = created_items(records)
    return plan.removals(created, on_thread)


def execute(
    request: UndoRequest, *, gateway: Gateway, settings: Settings, now: datetime | None = None
) -> int:
    verified = verify(gateway, request, bot=settings.bot)
    request = verified.request
    claim = claim_log_issue(
        gateway,
        settings,
        jobid=request.jobid,
        title=f"[Undo] {request.repo} #{verified.thread} by {request.actor}",
        body=f"{log_marker(request.jobid, request.repo)}\n"
        f"↩️ Undo asked by `{request.actor}`: {request.comment_url}\n",
        labels=[settings.labels.workflow],
        repo=request.repo,
    )
    if not claim.won:
        print(f"job {request.jobid}: already handled in {claim.url}; nothing to do", flush=True)
        return 0
    report = plan.UndoReport(actor=request.actor)
    found = find_run(gateway, settings, verified)
    if found is None:
        report.refused = "no run of the bot has writes left on this thread"
    else:
        run_found, (log, job_marker), comments = found
        report.run = run_found
        requester = job_marker.get("requester")
        report.requester = requester if isinstance(requester, str) else None
        report.refused = plan.may_undo(
            request.actor, requester=report.requester, collaborator=verified.collaborator
        )
        if report.refused is None:
            take_back_all(
                gateway,
                removals_of(run_found, request.repo, comments),
                report,
                bot=settings.bot,
                jobid=run_found.jobid,
            )
            record(
                gateway,
                report,
                control_repo=settings.control_repo,
                log_number=log.number,
                bot=settings.bot,
                undo_jobid=request.jobid,
                undo_url=request.comment_url,
                now=now or gateway.server_time or datetime.now(UTC),
            )
    finish(gateway, settings, request, claim.number, report, verified)
    return 1 if report.failed else 0


def finish(
    gateway: Gateway,
    settings: Settings,
    request: UndoRequest,
    number: int,
    report: plan.UndoReport,
    verified: VerifiedUndo,
) -> None:
    """The undo's own log issue says what happened and closes; the request gets 👍 or 😕."""
    lines = [
        log_marker(request.jobid, request.repo),
        f"↩️ Undo asked by `{request.actor}` ({verified.trust_note}): {request.comment_url}",
        "",
    ]
    if report.refused:
        lines.append(f"**Refused**: {report.refused}. Nothing was changed.")
    else:
        assert report.run is not None
        lines.append(
            f"**Undid** job `{report.run.jobid}` ({report.run.log_issue_url}), "
            f"asked by `{report.requester}`:"
        )
        lines += [f"- {r.describe()}" for r in report.done]
        lines += [f"- already gone: {r.url}" for r in report.gone]
        lines += [f"- kept (not the run's): {r.url}: {why}" for r, why in report.skipped]
        lines += [f"- ⚠️ failed: {r.describe()}: {why}" for r, why in report.failed]
        lines.append("\nThe bot stays allowed here.")
    closed = "not_planned" if report.refused else "completed"
    gateway.patch(
        f"/repos/{settings.control_repo}/issues/{number}",
        json={"body": "\n".join(lines) + "\n", "state": "closed", "state_reason": closed},
    )
    path = rest_path(request.repo, request.comment_type, request.comment_id, verified.thread)
    content = "confused" if report.refused or report.failed else "rocket"
    if path is not None:  # a courtesy, like every reaction: never fails the undo
        with contextlib.suppress(GitHubError):
            gateway.post(path, json={"content": content})
    actions_edge.set_outputs(
        {
            "undone": report.run.jobid if report.run and not report.refused else "",
            "refused": report.refused or "",
            "failures": len(report.failed),
        }
    )
    print(
        f"undo {request.jobid}: "
        + (
            f"refused: {report.refused}"
            if report.refused
            else f"{len(report.done)} write(s) taken back, {len(report.failed)} failed"
        ),
        flush=True,
    )
