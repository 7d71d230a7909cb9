"""What undo did, kept where the run is kept: its log issue and its audit chain.

The run's log issue gets one comment under the bot's ``undo`` marker listing
every write taken back (and what was kept, and why). The run's audit chain,
read back from its log issue, is continued with one sealed record per write
taken back (tool ``undo``) and posted again whole as a new audit set, so
``tusk audit verify LOG-ISSUE-URL`` verifies the run and its undo together.
A chain that cannot be read is not continued: the comment says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from tusk.attest.continuation import signed_continuation
from tusk.attest.sign_run import Attested, Signer
from tusk.attest.statement import RunClaims
from tusk.audit.chain import GENESIS_HASH, digest, seal
from tusk.audit.on_issue import audit_comments, joined_text, verify_comments
from tusk.contracts.models import AuditRecord
from tusk.github.gateway import Gateway
from tusk.github.once import post_marked_comment
from tusk.steps.undo.plan import Removal, UndoReport
from tusk.text.markers import render_marker


def run_comments(gateway: Gateway, repo: str, number: int, *, bot: str) -> list[dict[str, Any]]:
    """The bot's comments on a log issue (only they are trusted)."""
    comments = gateway.paginate(f"/repos/{repo}/issues/{number}/comments")
    return [
        c for c in comments if str((c.get("user") or {}).get("login") or "").lower() == bot.lower()
    ]


def chain_of(comments: Sequence[dict[str, Any]]) -> tuple[list[str], str | None]:
    """The run's audit lines as its log issue holds them, or why they cannot be read."""
    found, verdict = verify_comments(comments)
    if found is None or not verdict.ok:
        return [], verdict.message
    text = joined_text(found) or ""
    return [line for line in text.split("\n") if line], None


def continued(
    lines: Sequence[str], report: UndoReport, *, now: datetime, undo_url: str
) -> list[str]:
    """Pure: the chain with one sealed record per write taken back or failed."""
    head = AuditRecord.model_validate_json(lines[-1]).hash if lines else GENESIS_HASH
    out = list(lines)
    entries: list[tuple[Removal, str, str | None]] = [(r, "allowed", None) for r in report.done]
    entries += [(r, "failed", why) for r, why in report.failed]
    for removal, decision, reason in entries:
        fields = {
            "time": now.isoformat(),
            "tool": "undo",
            "kind": "write",
            "target": removal.repo,
            "args_digest": digest({"undo": removal.url, "by": report.actor, "request": undo_url}),
            "decision": decision,
            "code": None,
            "reason": reason or removal.describe(),
            "url": removal.url,
            "created": None,
            "duration_ms": 0.0,
            "seq": len(out),
            "prev_hash": head,
        }
        head, line = seal(fields)
        out.append(line)
    return out


def undo_comment(
    report: UndoReport, *, undo_jobid: str, undo_url: str, chain_problem: str | None
) -> str:
    """The comment on the run's log issue saying what undo did."""
    assert report.run is not None
    marker = render_marker("undo", {"jobid": report.run.jobid, "undo": undo_jobid})
    lines = [marker, f"### ↩️ Undone by `{report.actor}` ({undo_url})", ""]
    lines += [f"- done: {r.describe()}" for r in report.done]
    lines += [f"- already gone: {r.url}" for r in report.gone]
    lines += [f"- kept: {r.url}: {why}" for r, why in report.skipped]
    lines += [f"- ⚠️ failed: {r.describe()}: {why}" for r, why in report.failed]
    if not (report.done or report.gone or report.skipped or report.failed):
        lines.append("- nothing of this run was left to take back")
    if chain_problem:
        lines += ["", f"The audit chain could not be continued: {chain_problem}."]
    else:
        lines += ["", "Each write taken back is a record of the run's audit chain, posted below."]
    return "\n".join(lines) + "\n"


def record(
    gateway: Gateway,
    report: UndoReport,
    *,
    control_repo: str,
    log_number: int,
    bot: str,
    undo_jobid: str,
    undo_url: str,
    now: datetime,
    repo: str = "",
    signing: tuple[Signer | None, Attested | None] = (None, None),
) -> str | None:
    """Write the undo on the run's log issue and continue its audit chain; returns the
    reason the chain could not be continued, if it could not."""
    assert report.run is not None
    comments = run_comments(gateway, control_repo, log_number, bot=bot)
    lines, problem = chain_of(comments)
    path = f"/repos/{control_repo}/issues/{log_number}/comments"
    body = undo_comment(report, undo_jobid=undo_jobid, undo_url=undo_url, chain_problem=problem)
    post_marked_comment(
        gateway,
        control_repo,
        log_number,
        body,
        kind="undo",
        nonce=undo_jobid,
        key="undo",
        bot=bot,
        look_first=True,  # a rerun of this undo job finds its comment
        what="the undo's comment",
    )
    if problem is None:
        chain = continued(lines, report, now=now, undo_url=undo_url)
        head = AuditRecord.model_validate_json(chain[-1]).hash if chain else GENESIS_HASH
        bodies = audit_comments(
            "\n".join(chain) + "\n",
            jobid=report.run.jobid,
            run=f"undo-{undo_jobid}",
            records=len(chain),
            head=head,
            log_url=report.run.log_issue_url,
        )
        claims = RunClaims(
            jobid=report.run.jobid,
            run=f"undo-{undo_jobid}",
            repository=repo,
            requester=report.actor,
            trigger=undo_url,
            outcome="failed" if report.failed else "undone",
            cost_usd=None,
            head=head,
            step="undo",
        )
        signer, unsigned = signing
        for part in signed_continuation(
            bodies,
            gateway=gateway,
            claims=claims,
            repository=control_repo,
            signer=signer,
            unsigned=unsigned,
        ):
            # Parts are found by run and part number, not one nonce: posted plainly, never
            # repeated; a rerun is stopped before here by the undo's own log issue.
            gateway.post(path, json={"body": part}, may_repeat=False)
    return problem
