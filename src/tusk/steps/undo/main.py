"""``tusk undo``: the CLI edge of the undo action (one run taken back).

Reads the ``tusk-undo`` dispatch, checks on GitHub that its actor really
wrote ``@bot undo`` on that thread, claims the undo's own log issue (a
repeated delivery stops here: exactly once), finds the latest run that still
has writes on the thread, checks that the actor asked for it or that GitHub
confirms their write access to every repository the undo touches
(``tusk.github.rights``), takes its writes back, records that on the run's log
issue and in its audit chain, reports on the undo's log issue, and answers on
the thread when it refused or left something. The bot stays allowed. Exits 1
when a write could not be taken back, after doing the rest.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tusk import actions_edge
from tusk.attest.keyless import try_signer
from tusk.audit.chain import CreatedItem, created_items
from tusk.contracts import commands
from tusk.contracts.config import (
    Settings,
    load_secrets,
    load_settings,
    resolve_config_path,
)
from tusk.contracts.models import AuditRecord, UndoRequest
from tusk.errors import InputError
from tusk.github.gateway import Gateway, GitHubError, gateway_from_secrets
from tusk.github.once import post_marked_comment
from tusk.github.reactions import rest_path
from tusk.github.rights import confirmed_rights
from tusk.issues.log_issue import claim_command_issue, log_marker, parse_log_issue
from tusk.issues.state import StateStore
from tusk.steps.undo import plan
from tusk.steps.undo.on_log_issue import chain_of, record, run_comments
from tusk.steps.undo.take_back import take_back_all
from tusk.steps.undo.verify import VerifiedUndo, verify
from tusk.text.markers import first_marker, render_marker


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--payload",
        help="file holding the undo client_payload (or the whole event); "
        "default: $GITHUB_EVENT_PATH",
    )
    parser.add_argument("--config", help="tusk.yml; default: $TUSK_CONFIG or ./tusk.yml")


def read_request(path: Path) -> UndoRequest:
    """The request from a payload file or a whole ``repository_dispatch`` event."""
    return commands.read_request(commands.UNDO, path)


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
) -> tuple[list[plan.Removal], datetime | None]:
    """What the audit says the run created, and the run's comments on the thread; and
    when the run's audit ends (a comment changed after that was edited since)."""
    lines, _ = chain_of(comments)
    records = [AuditRecord.model_validate_json(line) for line in lines]
    on_thread = [
        plan.Removal("comment", repo, str(cid), f"{repo} comment {cid}")
        for cid in run_found.comment_ids
        if cid
    ]
    created: list[CreatedItem] = created_items(records)
    ended = max((r.time for r in records), default=None)
    return plan.removals(created, on_thread), ended


def execute(
    request: UndoRequest, *, gateway: Gateway, settings: Settings, now: datetime | None = None
) -> int:
    verified = verify(gateway, request, bot=settings.bot)
    request = verified.request
    claim = claim_command_issue(
        gateway,
        settings,
        jobid=request.jobid,
        repo=request.repo,
        thread=verified.thread,
        actor=request.actor,
        verb="Undo",
        asked=f"↩️ Undo asked by `{request.actor}`: {request.comment_url}",
    )
    if claim is None:
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
        removals, ended = removals_of(run_found, request.repo, comments)
        rights = confirmed_rights(
            gateway,
            request.actor,
            repos=plan.touched_repos(request.repo, removals, bot=settings.bot),
            requester=report.requester,
        )
        report.rights = rights.why
        report.refused = None if rights.allowed else rights.refusal()
        if report.refused is None:
            take_back_all(
                gateway, removals, report, bot=settings.bot, jobid=run_found.jobid, run_ended=ended
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
                repo=request.repo,
                signing=try_signer(settings.attestation, os.environ),
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
        f"↩️ Undo asked by `{request.actor}`: {request.comment_url}",
        *([f"Rights: {report.rights}."] if report.rights and not report.refused else []),
        "",
    ]
    if report.refused:
        lines.append(f"**Refused**: {report.refused} Nothing was changed.")
    else:
        assert report.run is not None
        lines.append(
            f"**Undid** job `{report.run.jobid}` ({report.run.log_issue_url}), "
            f"asked by `{report.requester}`:"
        )
        lines += [f"- {r.describe()}{edited_note(r, report)}" for r in report.done]
        lines += [f"- already gone: {r.url}" for r in report.gone]
        lines += [f"- kept (not the run's): {r.url}: {why}" for r, why in report.skipped]
        lines += [f"- ⚠️ failed: {r.describe()}: {why}" for r, why in report.failed]
        lines.append("\nThe bot stays allowed here.")
    closed = "not_planned" if report.refused else "completed"
    gateway.patch(
        f"/repos/{settings.control_repo}/issues/{number}",
        json={"body": "\n".join(lines) + "\n", "state": "closed", "state_reason": closed},
    )
    reply_on_thread(gateway, settings, request, verified.thread, report)
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


def edited_note(removal: plan.Removal, report: plan.UndoReport) -> str:
    if removal in report.edited:
        return " (edited after the run; deleted because the run's marker in it is intact)"
    return ""


def thread_reply(report: plan.UndoReport) -> str | None:
    """What undo says on the thread: why it refused, or what it left and why; None when it
    took back everything it found (the reaction says that)."""
    if report.refused:
        return f"↩️ Nothing was undone: {report.refused}"
    kept = [f"- kept {r.url}: {why}" for r, why in report.skipped]
    edited = [
        f"- deleted {r.url}, edited after the run: the run's marker in it is intact"
        for r in report.edited
    ]
    if not (kept or edited):
        return None
    return "\n".join(["↩️ Undone, except:" if kept else "↩️ Undone.", *kept, *edited])


def reply_on_thread(
    gateway: Gateway,
    settings: Settings,
    request: UndoRequest,
    number: int,
    report: plan.UndoReport,
) -> None:
    """One reply per undo request (found again by its nonce), never where the bot was sent
    away."""
    text = thread_reply(report)
    if text is None or StateStore(gateway, settings).read_blocklist().blocks(request.repo):
        return
    body = f"{render_marker('undo', {'nonce': request.jobid})}\n{text}\n"
    post_marked_comment(
        gateway,
        request.repo,
        number,
        body,
        kind="undo",
        nonce=request.jobid,
        bot=settings.bot,
        look_first=True,
        what=f"the undo's reply on {request.repo}#{number}",
    )
