"""The run's write-up as run-claude keeps it: what a write-up needs is in the run
folder from the start (``RUN_DIR/writeup.json``), so that the clean-up step can
write the run up if this process is killed; the progress comment that says the
run has started; the outcome recorded, then published part by part
(``publish``); and the failure of a run that never got going."""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time
from pathlib import Path

from tusk import actions_edge
from tusk.attest.keyless import AttestationMode, signer_from_environment, unsigned
from tusk.attest.sign_run import Signer
from tusk.contracts.config import Settings
from tusk.contracts.models import ContextDocument, RunMetadata
from tusk.contracts.pricing import Spend
from tusk.contracts.run_limits import run_limits, run_settings
from tusk.errors import UserError
from tusk.github.gateway import Gateway
from tusk.github.once import new_nonce
from tusk.issues.lease import report_progress
from tusk.issues.run_facts import run_facts
from tusk.steps.run_claude import thread_status
from tusk.steps.run_claude.inputs import EVENTS_FILE, JobInputs, JobResult, secret_values
from tusk.steps.run_claude.writeup import publish, summary
from tusk.steps.run_claude.writeup.outcome import Outcome


def report_started(inputs: JobInputs) -> bool:
    """Say on the log issue that the run has started (``tusk.issues.lease``); False when a later
    delivery took the claim over first, so this run must not go on."""
    state = publish.load_state(inputs.run_dir)
    assert state is not None
    token = inputs.secrets.require("agent_token")["agent_token"]
    gateway = Gateway(api_url=inputs.secrets.github_api_url, token=token, token_name="agent")
    run = inputs.run
    try:
        status, comment = report_progress(
            gateway,
            run.control_repo,
            run.log_issue_number,
            bot=inputs.settings.bot,
            jobid=run.jobid,
            nonce=run.claim_nonce or state.nonce,
        )
    finally:
        gateway.close()
    state.progress_comment_id = int(comment["id"])
    publish.save_state(inputs.run_dir, state)
    return status != "dead"


def taken_over(inputs: JobInputs) -> JobResult:
    state = publish.load_state(inputs.run_dir)
    assert state is not None
    state.complete = True  # nothing of ours to write up: the clean-up step must not either
    publish.save_state(inputs.run_dir, state)
    reason = (
        f"a later delivery of job {inputs.run.jobid} took over log issue "
        f"{inputs.run.log_issue_url} before this run reported progress; this run stops"
    )
    actions_edge.notice(reason)
    outcome = Outcome(kind="taken_over", headline="Taken over by a later delivery", detail=reason)
    return JobResult(outcome=outcome, reason=reason)


def start_state(inputs: JobInputs) -> None:
    """Keep what a write-up needs in the run folder from the start, so the clean-up
    step can write the run up if this process is killed."""
    run_dir = inputs.run_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(run_dir, 0o700)
    if publish.load_state(run_dir) is None:
        doc = context_document(inputs)
        publish.save_state(
            run_dir,
            publish.WriteUpState(
                run=inputs.run,
                bot=inputs.settings.bot,
                bug_label=inputs.settings.labels.bug,
                nonce=new_nonce(),
                facts=run_facts(doc, inputs.settings) if doc is not None else None,
                trigger=doc.trigger if doc is not None else None,
                started_at=time.time(),
                run_url=inputs.runner.run_url,
                signing=inputs.settings.attestation,
            ),
        )


def settle_limits(
    inputs: JobInputs, doc: ContextDocument, requester_left_usd: float | None
) -> JobInputs:
    """The run's own budget, turns and minutes (the marker's, the requester's remainder)
    put in its settings, and shown by its write-up."""
    config = doc.permission_config
    limits = run_limits(inputs.settings, config, requester_left_usd=requester_left_usd)
    settled = dataclasses.replace(inputs, settings=run_settings(inputs.settings, limits))
    state = publish.load_state(inputs.run_dir)
    if state is not None:
        state.facts = run_facts(doc, inputs.settings, limits)
        publish.save_state(inputs.run_dir, state)
    return settled


def note_resume(inputs: JobInputs, note: str, on_thread: str) -> None:
    """Whether the run resumed the thread's conversation, or started fresh and why: the
    write-up and the thread's status say it."""
    state = publish.load_state(inputs.run_dir)
    if state is not None and state.facts is not None and note:
        update = {"resume": note, "resume_on_thread": on_thread}
        state.facts = state.facts.model_copy(update=update)
        publish.save_state(inputs.run_dir, state)


def context_document(inputs: JobInputs) -> ContextDocument | None:
    """The job's context document (who asked, the trigger), if it can be read."""
    try:
        text = inputs.resolve(inputs.run.context_file).read_text(encoding="utf-8")
        return ContextDocument.model_validate_json(text)
    except (OSError, ValueError):
        return None


def write_up(
    inputs: JobInputs,
    *,
    outcome: Outcome,
    session_id: str | None,
    passes: list[tuple[str, str]],
    isolation_note: str,
    spend: Spend | None = None,
    network: str = "",
) -> JobResult:
    """Record the outcome in the run folder, then publish the write-up part by part."""
    run_dir = inputs.run_dir
    state = publish.load_state(run_dir)
    assert state is not None  # run_job wrote it first
    state.outcome = outcome
    state.session_id = session_id
    state.passes = list(passes)
    state.isolation = isolation_note
    state.spend = spend
    state.network = network
    state.finished_at = state.finished_at or time.time()
    publish.save_state(run_dir, state)
    state, report = publish_parts(inputs, run_dir)
    thread_status.conclude(inputs.secrets, inputs.settings, state, run_dir)
    return JobResult(
        outcome=outcome,
        session_id=session_id,
        comment_urls=report.urls,
        isolation=isolation_note,
        events_path=run_dir / EVENTS_FILE,
        spend=spend,
        network=network,
        writeup_complete=report.complete,
        writeup_failed=report.failed,
        reason=publish.describe(state, report),
    )


def publish_parts(inputs: JobInputs, run_dir: Path) -> tuple[publish.WriteUpState, publish.Report]:
    token = inputs.secrets.require("agent_token")["agent_token"]
    gateway = Gateway(api_url=inputs.secrets.github_api_url, token=token, token_name="agent")
    try:
        signer = job_signer(inputs.settings.attestation, run_dir)
        state, report = publish.write_up(
            run_dir, gateway, secrets=secret_values(inputs.secrets), signer=signer
        )
    finally:
        gateway.close()
    report_writeup(state, report)
    return state, report


def job_signer(mode: AttestationMode, run_dir: Path) -> Signer | None:
    """The job's keyless signer for the write-up; a signer that cannot be had is
    recorded as a failed signing (the write-up goes on, and says so)."""
    state = publish.load_state(run_dir)
    if state is None or state.attestation is not None:
        return None  # signed (or settled) once already
    try:
        return signer_from_environment(mode, os.environ)
    except Exception as failure:
        state.attestation = unsigned(failure)
        if state.attestation.mode == "failed":
            actions_edge.warning("Could not sign the run's audit record", detail=str(failure))
        publish.save_state(run_dir, state)
        return None


def report_writeup(state: publish.WriteUpState, report: publish.Report) -> None:
    """The write-up in the step log and summary: each part, and a failed one loudly."""
    for line in report.lines():
        print(line, flush=True)
    outcome = state.outcome or publish.KILLED
    first = report.urls[0] if report.urls else state.run.log_issue_url
    actions_edge.append_summary(
        summary.headline_for_step_summary(
            publish.summary_of(state), first, failed_parts=report.failed
        )
    )
    if not report.complete:
        actions_edge.error(
            "The write-up on the log issue is incomplete",
            detail=f"{', '.join(report.failed)} failed ({state.run.log_issue_url}). The "
            f"agent's outcome was {outcome.kind}. Re-running the write-up (the clean-up step "
            "does) adds what is missing without doubling what is there.",
        )


def report_setup_failure(inputs: JobInputs, error: BaseException) -> None:
    """Best effort: say on the log issue why the run never got going, and flag it."""
    if isinstance(error, UserError):
        detail = f"{error.title}. {error.hint}".strip()
    else:
        detail = f"{type(error).__name__}: {error}"
    outcome = Outcome(kind="setup_failed", headline="The agent run could not start", detail=detail)
    if inputs.secrets.agent_token is None:
        return
    try:
        state = publish.load_state(inputs.run_dir)
        assert state is not None
        state.outcome = outcome
        publish.save_state(inputs.run_dir, state)
        publish_parts(inputs, inputs.run_dir)
    except Exception as failure:
        actions_edge.warning("Could not record the failure on the log issue", detail=str(failure))


def record_never_started(
    run: RunMetadata, settings: Settings, gateway: Gateway, *, secrets: list[str]
) -> tuple[publish.WriteUpState, publish.Report]:
    """The run step never started: put that on the log issue (an error comment and the
    bug label), once however often the clean-up step runs."""
    with tempfile.TemporaryDirectory(prefix="tusk-never-started-") as folder:
        state = publish.WriteUpState(
            run=run,
            bot=settings.bot,
            bug_label=settings.labels.bug,
            nonce=new_nonce(),
            outcome=Outcome(
                kind="setup_failed",
                headline="The agent run never started",
                detail="An earlier step of the run-claude action failed (or the job was "
                "cancelled before it), so Claude Code was not run; the workflow run's log "
                "says which step. A later delivery of the job may take it over.",
            ),
        )
        publish.save_state(Path(folder), state)
        return publish.write_up(Path(folder), gateway, secrets=secrets)


def finish_writeup(
    run_dir: Path, *, gateway: Gateway | None, secrets: list[str] | None = None
) -> list[str]:
    """Complete the write-up of the run in ``run_dir`` if it is not whole yet: a run killed
    before it knew its outcome is written up as cancelled. Returns what it did."""
    state = publish.load_state(run_dir)
    if state is None:
        return []  # the run never got as far as its log issue: nothing to write up
    if state.complete:
        return [f"the write-up on {state.run.log_issue_url} is complete"]
    if gateway is None:
        return ["the write-up is incomplete, but no agent token was given to finish it"]
    killed = state.outcome is None
    signer = job_signer(state.signing, run_dir)  # the job's identity, as the run step's
    state, report = publish.write_up(run_dir, gateway, secrets=secrets or [], signer=signer)
    report_writeup(state, report)
    what = "recorded the run as cancelled (killed)" if killed else "completed the write-up"
    status = "" if report.complete else f"; still missing: {', '.join(report.failed)}"
    return [f"{what} on {state.run.log_issue_url}{status}"]
