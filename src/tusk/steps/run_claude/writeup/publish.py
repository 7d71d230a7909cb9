"""Publish the write-up on the log issue part by part, each retried safely (MISSION A8).

Every part (each summary and transcript comment, the error comment, the label,
the close) is attempted on its own: one part failing does not stop the
others, and the failure is reported by name. Every comment carries a hidden
``writeup`` marker naming its part, so

* after an uncertain answer (5xx, timeout, reset) the part is looked for on
  the log issue before it is posted again (``tusk.github.once``);
* a re-run of the write-up (the cleanup step, ``tusk run-claude --write-up``)
  first lists what exists and adds only what is missing, never a second copy.

The issue is closed only when the run completed *and* every comment is
there; a completed run whose write-up is incomplete gets the bug label
instead, which a later complete write-up removes again.

What a write-up needs is kept in ``RUN_DIR/writeup.json`` (``WriteUpState``)
from the start of the run, so the write-up can be redone by another process
after this one was cancelled or killed.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from tusk.approval.on_thread import post_preview
from tusk.approval.staging import write_up_parts
from tusk.attest.keyless import AttestationMode
from tusk.attest.sign_run import Attested, Signer
from tusk.audit.chain import conversation_digest, created_items, with_conversation
from tusk.contracts.models import AuditRecord, RunMetadata, Trigger
from tusk.contracts.pricing import Spend, format_usd
from tusk.github.gateway import Gateway, GitHubError, NotFound
from tusk.github.once import (
    DEFAULT_PATIENCE,
    Patience,
    new_nonce,
    post_marked_comment,
)
from tusk.github.reactions import COMPLETED, FAILED, Reaction, react
from tusk.issues.run_facts import RunFacts
from tusk.steps.run_claude.proxy import conversation as conversation_record
from tusk.steps.run_claude.proxy.exchanges import RECORD_FILE, transcript_events
from tusk.steps.run_claude.writeup import glance, signed, summary
from tusk.steps.run_claude.writeup.glance import PUSHES_FILE
from tusk.steps.run_claude.writeup.outcome import Outcome
from tusk.steps.run_claude.writeup.summary import Part
from tusk.steps.run_claude.writeup.transcript import redact
from tusk.text.markers import first_marker, render_marker
from tusk.text.render import render

STATE_FILE = "writeup.json"
CLOSED = {"state": "closed", "state_reason": "completed"}
EVENTS_FILE = "events.jsonl"
AUDIT_FILE = "audit.jsonl"
STAGED_FILE = "staged.jsonl"

KILLED = Outcome(
    kind="cancelled",
    headline="The run was stopped before it finished",
    detail="The run step was killed (or its runner lost) before it could write its outcome; "
    "the clean-up step recorded what the agent had written so far.",
)


class WriteUpState(BaseModel):
    """Everything a write-up needs except secrets, kept in the run folder."""

    model_config = ConfigDict(extra="forbid")

    run: RunMetadata
    bot: str
    bug_label: str
    isolation: str = ""
    outcome: Outcome | None = None  # None until the agent's outcome is known
    session_id: str | None = None
    passes: list[tuple[str, str]] = []
    nonce: str = ""
    complete: bool = False
    failed: list[str] = []
    flagged: bool = False  # the bug label was added because the write-up was incomplete
    progress_comment_id: int | None = None  # the run's progress comment on the log issue
    spend: Spend | None = None  # the model proxy's metering, once the run has it
    network: str = ""
    facts: RunFacts | None = None  # who asked, trust, permissions: the summary shows them
    trigger: Trigger | None = None  # the mention, which gets 🚀 or 😕 at the end
    started_at: float | None = None  # epoch seconds: the run step began
    finished_at: float | None = None  # epoch seconds: the agent's outcome was known
    run_url: str = ""  # the Actions run's page
    attestation: Attested | None = None  # the run's signed record, once made (tusk.attest)
    signing: AttestationMode = "off"  # the run's setting: the clean-up step signs by it too


def state_path(run_dir: Path) -> Path:
    return run_dir / STATE_FILE


def save_state(run_dir: Path, state: WriteUpState) -> None:
    path = state_path(run_dir)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(state.model_dump_json(indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)  # a reader sees the whole state or the previous one


def load_state(run_dir: Path) -> WriteUpState | None:
    path = state_path(run_dir)
    if not path.is_file():
        return None
    return WriteUpState.model_validate_json(path.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class PartResult:
    key: str
    ok: bool
    url: str = ""
    detail: str = ""
    existed: bool = False  # found on the log issue from an earlier attempt


@dataclass
class Report:
    results: list[PartResult] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return all(result.ok for result in self.results)

    @property
    def failed(self) -> list[str]:
        return [result.key for result in self.results if not result.ok]

    @property
    def urls(self) -> list[str]:
        return [result.url for result in self.results if result.url]

    def lines(self) -> list[str]:
        """One line per part for the step log."""
        out = []
        for result in self.results:
            if not result.ok:
                out.append(f"write-up part {result.key}: FAILED: {result.detail}")
            elif result.existed:
                out.append(f"write-up part {result.key}: already there ({result.url})")
            else:
                where = f" ({result.url or result.detail})" if result.url or result.detail else ""
                out.append(f"write-up part {result.key}: done{where}")
        return out


# --------------------------------------------------------------------------- markers


def part_marker(jobid: str, key: str, nonce: str) -> str:
    return render_marker("writeup", {"jobid": jobid, "part": key, "nonce": nonce})


def part_of(comment: dict[str, object], *, jobid: str, bot: str) -> str | None:
    """The part key a log issue comment holds, if the bot wrote it for this job."""
    user = comment.get("user")
    author = str(user.get("login") or "") if isinstance(user, dict) else ""
    if author.lower() != bot.lower():
        return None
    marker = first_marker(str(comment.get("body") or ""), "writeup")
    if marker is None or marker.get("jobid") != jobid or not isinstance(marker.get("part"), str):
        return None
    return str(marker["part"])


# --------------------------------------------------------------------------- I/O


def existing_parts(gateway: Gateway, run: RunMetadata, *, bot: str) -> dict[str, dict[str, Any]]:
    """The parts already on the log issue, by key. A part that exists twice (a copy that
    showed up after its look-up gave up) keeps its first comment; the others are deleted."""
    path = f"/repos/{run.control_repo}/issues/{run.log_issue_number}/comments"
    found: dict[str, dict[str, Any]] = {}
    extra: list[int] = []
    for comment in gateway.paginate(path):
        key = part_of(comment, jobid=run.jobid, bot=bot)
        if key is None:
            continue
        if key in found:
            extra.append(int(comment["id"]))
        else:
            found[key] = comment
    for comment_id in extra:
        try:
            gateway.delete(f"/repos/{run.control_repo}/issues/comments/{comment_id}")
        except NotFound:
            pass  # someone (a racing write-up) deleted it already
        except GitHubError:
            pass  # a visible extra copy is harmless; the next write-up tries again
    return found


def publish(
    gateway: Gateway,
    *,
    run: RunMetadata,
    parts: Sequence[Part],
    bot: str,
    bug_label: str,
    nonce: str,
    flagged: bool = False,
    patience: Patience = DEFAULT_PATIENCE,
    trigger: Trigger | None = None,
    reaction: Reaction | None = FAILED,
) -> tuple[Report, bool]:
    """Publish every part that is not on the log issue yet; returns the report and
    whether the issue now carries the bug label because the write-up is incomplete.
    The ``react`` part puts ``reaction`` (🚀, 😕, or none) on the ``trigger``."""
    issue = f"/repos/{run.control_repo}/issues/{run.log_issue_number}"
    report = Report()
    comments = [part for part in parts if part.action == "comment"]
    try:
        existing = existing_parts(gateway, run, bot=bot)
    except GitHubError as error:
        # Without the list, posting could double a part: leave them for a re-run.
        detail = f"could not list what exists: {error.title}"
        report.results += [PartResult(part.key, False, detail=detail) for part in comments]
        existing = None
    if existing is not None:
        for part in comments:
            report.results.append(
                _comment_part(gateway, run, part, existing, bot=bot, nonce=nonce, patience=patience)
            )
    comments_done = report.complete

    def add_label() -> PartResult:
        return _step("label", lambda: gateway.post(f"{issue}/labels", json={"labels": [bug_label]}))

    for part in parts:
        if part.action == "label":
            report.results.append(add_label())
        elif part.action == "close" and not comments_done:
            # The agent's work is done but not all of it is written up: flag it, keep it open.
            labelled = add_label()
            report.results.append(labelled)
            flagged = flagged or labelled.ok
        elif part.action == "react":
            report.results.append(_reaction(gateway, run, trigger, reaction))
        elif part.action == "preview" and not comments_done:  # the set first, then its preview
            report.results.append(
                PartResult(part.key, False, detail="the staged set is not posted")
            )
        elif part.action == "preview":
            report.results.append(_preview(gateway, run, part, bot=bot, patience=patience))
        elif part.action == "body":
            edit = functools.partial(_outcome_on_top, gateway, issue, part)
            report.results.append(_step(part.key, edit))
        elif part.action == "close":
            if flagged:  # an earlier, incomplete write-up added the label: it is whole now
                unflag = _step("unlabel", lambda: _remove_label(gateway, issue, bug_label))
                report.results.append(unflag)
                flagged = not unflag.ok
            closed = {**CLOSED, "state_reason": part.state_reason}
            report.results.append(
                _step("close", functools.partial(gateway.patch, issue, json=closed))
            )
    return report, flagged


def _comment_part(
    gateway: Gateway,
    run: RunMetadata,
    part: Part,
    existing: dict[str, dict[str, Any]],
    *,
    bot: str,
    nonce: str,
    patience: Patience,
) -> PartResult:
    if part.key in existing:
        return PartResult(part.key, True, str(existing[part.key].get("html_url", "")), existed=True)
    body = f"{part_marker(run.jobid, part.key, nonce)}\n{part.body}"
    try:
        created = post_marked_comment(
            gateway,
            run.control_repo,
            run.log_issue_number,
            body,
            kind="writeup",
            nonce=part.key,
            key="part",
            bot=bot,
            patience=patience,
            what=f"write-up part {part.key}",
        )
    except GitHubError as error:
        return PartResult(part.key, False, detail=error.title)
    return PartResult(part.key, True, str(created.get("html_url", "")))


def mention_reaction(outcome: Outcome) -> Reaction | None:
    """🚀 for a completed run, 😕 for one that failed, none for one a person stopped:
    their stop command gets its own answer, and a stop is not a failure."""
    if outcome.kind == "stopped":
        return None
    return COMPLETED if outcome.ok else FAILED


def _reaction(
    gateway: Gateway, run: RunMetadata, trigger: Trigger | None, content: Reaction | None
) -> PartResult:
    """🚀 or 😕 on the mention. A courtesy: not added, it is said in the step log but
    does not make the write-up incomplete (GitHub keeps one reaction per user and
    content, so a repeated write-up adds nothing)."""
    if content is None:
        return PartResult("reaction", True, detail="stopped on the thread: the 👀 stays")
    if trigger is None:
        return PartResult("reaction", True, detail="no trigger recorded")
    if react(gateway, repo=run.repo, trigger=trigger, content=content):
        return PartResult("reaction", True, detail=content)
    return PartResult("reaction", True, detail=f"{content} could not be added")


def _preview(
    gateway: Gateway, run: RunMetadata, part: Part, *, bot: str, patience: Patience
) -> PartResult:
    """The staged set's preview on the trigger's thread (``tusk.approval``)."""
    marker = first_marker(part.body, "preview") or {}
    try:
        posted = post_preview(
            gateway,
            repo=run.repo,
            number=run.thread_number or 0,
            body=part.body,
            digest=str(marker.get("digest", "")),
            bot=bot,
            patience=patience,
        )
    except GitHubError as error:
        return PartResult(part.key, False, detail=error.title)
    return PartResult(part.key, True, str(posted.get("html_url", "")))


def _outcome_on_top(gateway: Gateway, issue: str, part: Part) -> None:
    """The one-line outcome atop the log issue's body (an edit of the bot's own issue;
    sent again, it puts the same line in the same place)."""
    body = str(gateway.get(issue).get("body") or "")
    new = glance.with_outcome(body, part.body)
    if new != body:
        gateway.patch(issue, json={"body": new})


def _step(key: str, action: Callable[[], object]) -> PartResult:
    """An idempotent part (label, close): the gateway retries it; here it only may fail."""
    try:
        action()
    except GitHubError as error:
        return PartResult(key, False, detail=error.title)
    return PartResult(key, True)


def _remove_label(gateway: Gateway, issue: str, label: str) -> None:
    with contextlib.suppress(NotFound):  # already gone
        gateway.delete(f"{issue}/labels/{label}")


# --------------------------------------------------------------------------- from the run folder


def compose_parts(run_dir: Path, state: WriteUpState, secrets: Sequence[str]) -> list[Part]:
    """The write-up parts from what the run folder holds (events, audit, staged writes)."""
    outcome = state.outcome or KILLED
    if outcome.kind == "setup_failed":
        return _setup_failure_parts(state, outcome, secrets)
    events, said = _from_proxy_record(run_dir, state.run.jobid, secrets)
    records, problem = summary.read_audit(run_dir / AUDIT_FILE)
    staged = summary.read_staged(run_dir / STAGED_FILE)
    audit_path = run_dir / AUDIT_FILE
    audit_text = audit_path.read_text(encoding="utf-8") if audit_path.is_file() else None
    if said is not None and audit_text is not None and problem is None:
        # The record goes inside the chain: the head the issue pins covers its digest.
        audit_text, records = with_conversation(
            audit_text, records, digest=said.digest(), target=_thread(state), time=_sealed_at(state)
        )

    def audit_for(transcript: Sequence[str]) -> list[str]:
        return summary.audit_bodies(
            audit_text,
            records=records,
            jobid=state.run.jobid,
            run=state.nonce,
            log_url=state.run.log_issue_url,
            secrets=secrets,
            transcript=transcript,
            conversation=conversation_digest(records),
        )

    # The digest is of fixed length: the parts' count does not hang on the transcript.
    audit = audit_for([])

    pushed = glance.read_pushes(run_dir / PUSHES_FILE)
    line = glance_of(state, records, pushed)

    def summary_for(parts: int) -> summary.RunSummary:
        return summary.build_summary(
            glance=line,
            pushed=pushed,
            run_url=state.run_url,
            run=state.run,
            outcome=outcome,
            records=records,
            audit_problem=problem,
            session_id=state.session_id,
            passes=state.passes,
            isolation=state.isolation,
            transcript_parts=parts,
            staged=staged,
            spend=state.spend,
            network=state.network,
            facts=state.facts,
            audit_parts=len(audit),
        )

    comments = summary.compose(
        summary_for=summary_for,
        transcript_markdown=summary.render_transcript(state.run.jobid, events),
        outcome=outcome,
        secrets=secrets,
        bug_label=state.bug_label,
    )
    audit = audit_for(comments.transcript)  # the audit names the transcript it covers
    approval = write_up_parts(run_dir, state.run, ok=outcome.ok, bot=state.bot)
    return summary.plan_parts(
        comments,
        closes_as=outcome.closes_as,
        audit=audit,
        react=state.trigger is not None,
        approval=approval.log_comments,
        preview=approval.preview,
        glance=line,
        conversation=conversation_record.comment_body(said) if said is not None else None,
    )


def _thread(state: WriteUpState) -> str:
    number = state.run.thread_number
    return state.run.repo + (f"#{number}" if number is not None else "")


def _sealed_at(state: WriteUpState) -> datetime:
    """When the record's line is sealed: fixed by the run, so a write-up done again
    posts the same chain."""
    at = state.finished_at if state.finished_at is not None else state.started_at
    return datetime.fromtimestamp(at or 0.0, UTC)


def _from_proxy_record(
    run_dir: Path, jobid: str, secrets: Sequence[str]
) -> tuple[list[Any], conversation_record.ConversationRecord | None]:
    """The transcript's events and the conversation a later run on the thread resumes from.

    Both come from the model proxy's own record, never Claude Code's stream
    (events.jsonl), which a process of the agent's uid can write to."""
    record_path = run_dir / RECORD_FILE
    if not record_path.is_file():
        return [], None
    with record_path.open(encoding="utf-8") as handle:
        lines = handle.readlines()
    said = conversation_record.from_record(lines, jobid=jobid)
    if said is not None:
        said = conversation_record.fitted(
            conversation_record.redacted(said, lambda text: redact(text, secrets))
        )
    return transcript_events(lines), said


def glance_of(
    state: WriteUpState, records: Sequence[AuditRecord], pushed: Sequence[glance.PushedBranch]
) -> str:
    """The run's outcome in one line (``glance``), from the state and the records."""
    outcome = state.outcome or KILLED
    took = (
        state.finished_at - state.started_at
        if state.started_at is not None and state.finished_at is not None
        else None
    )
    kinds = [item.kind for item in created_items(records)]
    return glance.outcome_line(
        mark=outcome.mark,
        headline=outcome.headline,
        seconds=took,
        turns=outcome.turns,
        cost=format_usd(state.spend.cost_usd) if state.spend is not None else "",
        created=glance.created_line(kinds, pushed),
        network=state.network,
        run_url=state.run_url,
    )


def _setup_failure_parts(
    state: WriteUpState, outcome: Outcome, secrets: Sequence[str]
) -> list[Part]:
    facts = summary.build_summary(
        run=state.run,
        outcome=outcome,
        records=[],
        audit_problem=None,
        session_id=None,
        passes=[],
        isolation="",
        transcript_parts=0,
    )
    body = summary.clean(
        render("run_error.md.j2", summary=facts, bug_label=state.bug_label), secrets
    )
    return [Part("setup-error", "comment", body), Part("label", "label")]


def summary_of(state: WriteUpState) -> summary.RunSummary:
    """The summary's facts without reading the run folder (for the step summary)."""
    return summary.build_summary(
        run=state.run,
        outcome=state.outcome or KILLED,
        records=[],
        audit_problem=None,
        session_id=state.session_id,
        passes=state.passes,
        isolation=state.isolation,
        transcript_parts=0,
        spend=state.spend,
        network=state.network,
        facts=state.facts,
    )


def write_up(
    run_dir: Path,
    gateway: Gateway,
    *,
    secrets: Sequence[str] = (),
    patience: Patience = DEFAULT_PATIENCE,
    signer: Signer | None = None,
) -> tuple[WriteUpState, Report]:
    """Publish (or complete) the write-up of the run in ``run_dir``; record how it went.
    With a ``signer`` the audit record is signed once, stored in the control repository's
    attestations and named on the log issue; without one the issue says it is not signed."""
    state = load_state(run_dir)
    if state is None:
        raise FileNotFoundError(f"{state_path(run_dir)} does not exist: no run to write up")
    if not state.nonce:
        state.nonce = new_nonce()
    if state.outcome is None:
        state.outcome = KILLED
    parts = compose_parts(run_dir, state, secrets)
    parts, attested = signed.with_attestation(parts, state, gateway, signer)
    if attested != state.attestation:  # signed once, however often the write-up is redone
        state.attestation = attested
        save_state(run_dir, state)
    report, flagged = publish(
        gateway,
        run=state.run,
        parts=parts,
        bot=state.bot,
        bug_label=state.bug_label,
        nonce=state.nonce,
        flagged=state.flagged,
        patience=patience,
        trigger=state.trigger,
        reaction=mention_reaction(state.outcome),
    )
    state.complete = report.complete
    state.failed = report.failed
    state.flagged = flagged
    save_state(run_dir, state)
    return state, report


def describe(state: WriteUpState, report: Report) -> str:
    """One sentence for the step output ``reason``: the agent's outcome, then the write-up's."""
    outcome = state.outcome or KILLED
    text = outcome.detail or outcome.headline
    if report.complete:
        return text
    return f"{text} (write-up incomplete: {', '.join(report.failed)} failed)"
