"""Compose the run's write-up on its log issue (MISSION A8, A9).

Pure: the summary model (links to everything the agent created, the refused
calls with codes and reasons, the audit chain's head hash), the transcript,
the comments they make (each within GitHub's 65,536 characters), and the
plan of write-up parts: every comment, then the label or the close. The I/O
that publishes the parts one by one, each retried safely on its own, is in
``writeup``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from tusk.audit.chain import created_items, head_hash
from tusk.audit.on_issue import audit_comments, transcript_digest
from tusk.contracts.models import AuditRecord, RunMetadata
from tusk.contracts.pricing import Spend
from tusk.issues.run_facts import RunFacts
from tusk.steps.run_claude.writeup.glance import PushedBranch
from tusk.steps.run_claude.writeup.outcome import Outcome
from tusk.steps.run_claude.writeup.transcript import (
    COMMENT_LIMIT,
    Transcript,
    blocks_from_events,
    defuse_mentions,
    fence_for,
    redact,
    shorten,
    split_comments,
)
from tusk.text.markers import neutralise_markers
from tusk.text.render import render

# Room kept in each comment for the hidden part marker the write-up puts first.
MARKER_ROOM = 300
PART_LIMIT = COMMENT_LIMIT - MARKER_ROOM


class View(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CreatedLink(View):
    kind: str
    url: str


class RefusedCall(View):
    tool: str
    target: str
    code: str
    reason: str


class StagedWrite(View):
    """A write record-only mode recorded instead of performing it, for people to review."""

    tool: str
    target: str
    summary: str
    request: str
    fence: str


class PassLine(View):
    name: str
    headline: str


class RunSummary(View):
    jobid: str
    repo: str
    trigger_url: str
    ok: bool
    mark: str  # ✅, ❌, or ⏹️ for a run a person stopped
    headline: str
    detail: str
    session_id: str | None
    created: tuple[CreatedLink, ...]
    refused: tuple[RefusedCall, ...]
    staged: tuple[StagedWrite, ...]
    passes: tuple[PassLine, ...]
    audit_records: int
    audit_head: str
    audit_problem: str | None
    isolation: str
    transcript_parts: int
    spend: Spend | None = None  # the model proxy's metering; None when no session started
    network: str = ""  # `fenced (N hosts allowed)` or `open (why)`
    facts: RunFacts | None = None  # who asked, trust, permissions, marker, budgets
    audit_parts: int = 0  # audit comments posted on the log issue
    log_issue_url: str = ""
    glance: str = ""  # the one-line outcome (``glance.outcome_line``), also atop the body
    pushed: tuple[PushedBranch, ...] = ()  # each pushed branch's diff summary
    run_url: str = ""  # the Actions run

    @property
    def cost_line(self) -> str:
        return self.spend.line() if self.spend is not None else ""


def table_cell(text: str) -> str:
    """One markdown table cell: no pipe or line break can reshape the table."""
    return " ".join(text.replace("|", "\\|").split())


def build_summary(
    *,
    run: RunMetadata,
    outcome: Outcome,
    records: Sequence[AuditRecord],
    audit_problem: str | None,
    session_id: str | None,
    passes: Sequence[tuple[str, str]],
    isolation: str,
    transcript_parts: int,
    staged: Sequence[StagedWrite] = (),
    spend: Spend | None = None,
    network: str = "",
    facts: RunFacts | None = None,
    audit_parts: int = 0,
    glance: str = "",
    pushed: Sequence[PushedBranch] = (),
    run_url: str = "",
) -> RunSummary:
    return RunSummary(
        glance=glance,
        pushed=tuple(pushed),
        run_url=run_url,
        jobid=run.jobid,
        repo=run.repo,
        trigger_url=run.trigger_url,
        ok=outcome.ok,
        mark=outcome.mark,
        headline=outcome.headline,
        detail=outcome.detail,
        session_id=session_id,
        created=tuple(CreatedLink(kind=i.kind, url=i.url) for i in created_items(records)),
        refused=tuple(
            RefusedCall(
                tool=table_cell(r.tool),
                target=table_cell(r.target),
                code=table_cell(r.code or "FAILED"),
                reason=table_cell(r.reason or ""),
            )
            for r in records
            if r.decision in ("refused", "failed")
        ),
        staged=tuple(staged),
        passes=tuple(PassLine(name=name, headline=headline) for name, headline in passes),
        audit_records=len(records),
        audit_head=head_hash(list(records)),
        audit_problem=audit_problem,
        isolation=isolation,
        transcript_parts=transcript_parts,
        spend=spend,
        network=network,
        facts=facts,
        audit_parts=audit_parts,
        log_issue_url=run.log_issue_url,
    )


def refusal_log_lines(records: Sequence[AuditRecord]) -> list[str]:
    """One line per refused or failed call, for the step log (MISSION L1): the
    Actions log shows refusals as well as the log issue does."""
    return [
        f"{r.decision} call: {r.tool} on {r.target}: {r.code or 'FAILED'}"
        + (f": {' '.join(r.reason.split())}" if r.reason else "")
        for r in records
        if r.decision in ("refused", "failed")
    ]


def render_transcript(jobid: str, events: Sequence[dict[str, Any]]) -> str:
    transcript = Transcript(
        jobid=jobid, blocks=tuple(blocks_from_events(events)), events=len(events)
    )
    return render("transcript.md.j2", transcript=transcript)


def clean(text: str, secrets: Sequence[str]) -> str:
    """Every comment a run posts: no secret, no notification, and no Tusk marker but
    the part marker added after this. The transcript quotes whatever the agent printed,
    and the bot's comments on the log issue are where markers are trusted (an audit
    part, a progress or takeover comment)."""
    return neutralise_markers(defuse_mentions(redact(text, secrets)))


@dataclass(frozen=True)
class Comments:
    summary: tuple[str, ...]
    transcript: tuple[str, ...]
    error: str | None

    def in_order(self) -> list[str]:
        return [*self.summary, *self.transcript, *([self.error] if self.error else [])]


def compose(
    *,
    summary_for: Callable[[int], RunSummary],
    transcript_markdown: str,
    outcome: Outcome,
    secrets: Sequence[str],
    bug_label: str,
) -> Comments:
    """``summary_for(parts)`` builds the summary once the transcript's part count is known.
    Every comment fits GitHub's limit with room for its part marker: a long summary
    (many refusals or staged writes) is split like the transcript."""
    parts = split_comments(
        clean(transcript_markdown, secrets), limit=PART_LIMIT, label="transcript part"
    )
    summary: RunSummary = summary_for(len(parts))
    summary_text = clean(render("run_summary.md.j2", summary=summary), secrets)
    error = None
    if outcome.closes_as is None:
        error = clean(render("run_error.md.j2", summary=summary, bug_label=bug_label), secrets)
        error = split_comments(error, limit=PART_LIMIT)[0]  # the headline and reason come first
    return Comments(
        summary=tuple(split_comments(summary_text, limit=PART_LIMIT, label="summary part")),
        transcript=tuple(parts),
        error=error,
    )


PartAction = Literal["comment", "label", "close", "react", "preview", "body"]


@dataclass(frozen=True)
class Part:
    """One piece of the write-up, published and retried on its own.

    ``key`` names it on the log issue (``summary-1``, ``transcript-3``, ``error``,
    ``label``, ``close``), so a re-run finds what exists and adds only the rest.
    """

    key: str
    action: PartAction
    body: str = ""
    state_reason: str = "completed"  # of a ``close``: ``not_planned`` after a go-away


def plan_parts(
    comments: Comments,
    *,
    closes_as: str | None,
    audit: Sequence[str] = (),
    react: bool = False,
    approval: Sequence[str] = (),
    preview: str | None = None,
    glance: str = "",
    conversation: str | None = None,
) -> list[Part]:
    """The write-up in order: every comment (summary, transcript, the audit records, a
    staged set waiting for approval),
    then ``close`` (as ``closes_as``: a completed run, or not planned when the bot was
    sent away mid-run) or ``label`` (the bug label, issue left open) for any other
    outcome, then the reaction on the trigger (never where the bot was sent away)."""
    parts = [Part(f"summary-{i}", "comment", body) for i, body in enumerate(comments.summary, 1)]
    parts += [
        Part(f"transcript-{i}", "comment", body) for i, body in enumerate(comments.transcript, 1)
    ]
    if conversation is not None:  # before the audit that names its digest
        parts.append(Part("conversation", "comment", conversation))
    parts += [Part(f"audit-{i}", "comment", body) for i, body in enumerate(audit, 1)]
    parts += [Part(f"approval-{i}", "comment", body) for i, body in enumerate(approval, 1)]
    if preview is not None:  # on the trigger's thread, once the set is on the log issue
        parts.append(Part("preview", "preview", preview))
    if comments.error:
        parts.append(Part("error", "comment", comments.error))
    if glance:  # the outcome in one line atop the body, once the comments below say it all
        parts.append(Part("outcome", "body", glance))
    parts.append(
        Part("close", "close", state_reason=closes_as) if closes_as else Part("label", "label")
    )
    if react and closes_as != "not_planned":
        parts.append(Part("reaction", "react"))
    return parts


def audit_bodies(
    text: str | None,
    *,
    records: Sequence[AuditRecord],
    jobid: str,
    run: str,
    log_url: str,
    secrets: Sequence[str],
    transcript: Sequence[str] | None = None,
    conversation: str | None = None,
) -> list[str]:
    """The audit records as log issue comments (``tusk.audit.on_issue``), byte for byte so
    the chain verifies from the issue. Records are digests, codes and Tusk's own
    words; should a secret be in them all the same, they are withheld here (the run's
    artifact keeps them) rather than redacted into a chain that no longer verifies."""
    if text is None:
        return []
    if any(secret and len(secret) >= 8 and secret in text for secret in secrets):
        return [
            "### 🔏 Audit log\n\nThe audit records are not posted here: they hold a value "
            "this run keeps secret. The run's `tusk-audit-*` artifact keeps `audit.jsonl`."
        ]
    return audit_comments(
        text,
        jobid=jobid,
        run=run,
        records=len(records),
        head=head_hash(list(records)),
        transcript=transcript_digest(transcript) if transcript is not None else None,
        conversation=conversation,
        log_url=log_url,
        limit=PART_LIMIT,
    )


def headline_for_step_summary(
    summary: RunSummary, comment_url: str | None, *, failed_parts: Sequence[str] = ()
) -> str:
    """The step summary's first lines: the outcome, its cost and network, and a write-up
    that is incomplete."""
    mark = "❌" if failed_parts else summary.mark
    link = f" · [log issue]({comment_url})" if comment_url else ""
    detail = f"\n\n{summary.detail}" if summary.detail else ""
    facts = [
        *([f"- model cost: {summary.cost_line}"] if summary.spend is not None else []),
        *([f"- network: {summary.network}"] if summary.network else []),
    ]
    record = "\n\n" + "\n".join(facts) if facts else ""
    missing = ""
    if failed_parts:
        missing = f"\n\n⚠️ Write-up incomplete: {', '.join(failed_parts)} failed."
    return f"### {mark} Agent run: {summary.headline}{link}{detail}{record}{missing}\n"


def read_audit(path: Any) -> tuple[list[AuditRecord], str | None]:
    """The audit records, or none and the reason when the chain does not hold."""
    from tusk.audit.chain import read_records

    try:
        return read_records(path), None
    except ValueError as error:
        return [], f"the audit log failed verification: {error}"


STAGED_REQUEST_CHARS = 3_000


def read_staged(path: Path) -> list[StagedWrite]:
    """The MCP server's record of staged writes (``RUN_DIR/staged.jsonl``)."""
    if not path.is_file():
        return []
    staged = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(data, dict):
            continue
        request = shorten(json.dumps(data.get("request"), indent=2), STAGED_REQUEST_CHARS)
        staged.append(
            StagedWrite(
                tool=str(data.get("tool", "")),
                target=str(data.get("target", "")),
                summary=" ".join(str(data.get("summary", "")).split()),
                request=request,
                fence=fence_for(request),
            )
        )
    return staged
