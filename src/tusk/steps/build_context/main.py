"""``tusk build-context``: the CLI edge of the build-context action.

Reads the merged context document and tusk.yml, reads history and memory
from the state issues, builds the task and context (``build_context``),
claims the job's log issue (exactly once per job id) and, when this run owns
the job, writes task.md, context.md, diff.patch (PRs) and run.json into the
output directory. When another run owns the job it says so, sets
``proceed=false`` and writes nothing, so the workflow stops.
"""

from __future__ import annotations

import argparse
import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import ClassVar

from pydantic import Field, ValidationError

from tusk import actions_edge
from tusk.contracts.config import Settings, load_secrets, load_settings, resolve_config_path
from tusk.contracts.inputs import AGENT_TOKEN, API_URL, OLD_API_URL, StepInputs, config_input
from tusk.contracts.models import ContextDocument, RunMetadata
from tusk.errors import InputError
from tusk.github.gateway import Gateway, gateway_from_secrets
from tusk.github.once import new_nonce
from tusk.github.thread_status import Status, ThreadStatus, thread_kind
from tusk.issues import followups
from tusk.issues.followups import thread_key
from tusk.issues.log_issue import LogIssueClaim, claim_log_issue
from tusk.issues.ran_before import ran_before, say_not_again
from tusk.issues.run_facts import run_facts
from tusk.issues.state import StateStore
from tusk.issues.thread_runs import RunInFlight, holder_before
from tusk.steps.build_context import build_context as bc
from tusk.steps.build_context import log_body as lb
from tusk.steps.build_context.items import Entry
from tusk.steps.build_context.views import Sizes, SummaryView

TASK_FILE = "task.md"
RUN_FILE = "run.json"
FULL_CONTEXT_FILE = "full-context.md"
# A job's log issues are created after its trigger; the margin absorbs clock skew.
SINCE_MARGIN = timedelta(days=1)
# Every output the action declares, so a stopped run still sets each one.
EMPTY_OUTPUTS: dict[str, str | bool | int] = {
    "proceed": False,
    "jobid": "",
    "log-issue-number": "",
    "log-issue-url": "",
    "task-path": "",
    "context-path": "",
    "diff-path": "",
    "run-json": "",
    "full-context-path": "",
    "context-cut": False,
    "artifact-name": "",
}


class Inputs(StepInputs):
    """The inputs of actions/build-context."""

    read_elsewhere: ClassVar[dict[str, str]] = {**AGENT_TOKEN, **API_URL, **OLD_API_URL}

    context_file: str = Field(description="the merged context document (JSON)")
    config: str = config_input()
    output_dir: str = Field("tusk-run", description="where the files are written")
    artifact_name: str = Field(
        "",
        description="name the full context is uploaded under when the log issue is cut; "
        "empty: tusk-context-<jobid>",
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    Inputs.add_arguments(parser)
    parser.add_argument(
        "--run-url", help="link to the workflow run holding that artifact; default: from $GITHUB_*"
    )


def read_context(path: Path) -> ContextDocument:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise InputError(f"cannot read the context file {path}", str(error)) from None
    return parse_context(data, path)


@contextmanager
def collection_paused() -> Iterator[None]:
    """The cyclic garbage collector paused for a burst of allocations that all stay
    alive (the validated document, then what is built from it): each collection would
    walk every object made so far, so parsing tens of thousands of comments paid for
    them again and again, more the longer the thread. Reference counting still frees
    everything; the collector runs again afterwards (unless it was paused before:
    ``run`` pauses it for the whole step)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def parse_context(data: bytes, path: Path) -> ContextDocument:
    """The context document, validated straight from its bytes (no ``json.loads`` first)."""
    try:
        with collection_paused():
            return ContextDocument.model_validate_json(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise InputError(
            f"{path} is not a Tusk context document",
            f"{error.error_count()} problem(s), first: {where}: {first['msg']}. "
            "Pass the file merge-shards wrote.",
        ) from None


def run(args: argparse.Namespace) -> int:
    inputs = Inputs.from_args(args)
    settings = load_settings(resolve_config_path(inputs.config))
    context_file = Path(inputs.context_file)
    # One step per process, and what it makes lives until the step ends: the collector
    # would only walk it again and again (a seventh of the step for a long thread).
    with collection_paused():
        doc = read_context(context_file)
        gateway = gateway_from_secrets(load_secrets(), "agent")
        outputs = build_and_claim(
            doc,
            settings,
            gateway,
            context_file=context_file,
            out_dir=Path(inputs.output_dir),
            artifact_name=inputs.artifact_name or f"tusk-context-{doc.jobid}",
            run_url=args.run_url or actions_edge.run_url(),
        )
    actions_edge.set_outputs(outputs)
    return 0


def status_on_thread(
    gateway: Gateway, settings: Settings, doc: ContextDocument, log_issue_url: str
) -> None:
    """The run's status comment on its thread, as *queued* (``tusk.github.thread_status``)."""
    ThreadStatus(
        gateway,
        repo=doc.repo,
        number=doc.trigger.number,
        kind=thread_kind(doc.trigger.type),
        jobid=doc.jobid,
        bot=settings.bot,
        go_away=settings.go_away.phrase,
        log_issue_url=log_issue_url,
    ).show(Status("queued"))


@dataclass(frozen=True)
class Prepared:
    """What the step writes and posts, made before any claim: no I/O in it."""

    built: bc.Built
    task_md: str
    context_md: str
    sizes: Sizes
    log: lb.LogBody


def prepare(
    doc: ContextDocument,
    settings: Settings,
    *,
    history: Sequence[Entry],
    memory: Sequence[Entry],
    artifact_name: str,
    run_url: str | None,
    nonce: str,
) -> Prepared:
    """Build, render task.md and context.md, fit the log issue body."""
    with collection_paused():
        built = bc.build(doc, settings, history=history, memory=memory)
        task_md = bc.render_task(built.task)
        context_md = bc.render_context(built.context)
        log = lb.log_issue_body(
            jobid=doc.jobid,
            repo=doc.repo,
            task_text=built.task.text,
            context_text=context_md,
            artifact_name=artifact_name,
            artifact_url=run_url,
            facts=run_facts(doc, settings),
            nonce=nonce,
            thread=thread_key(doc.repo, built.task.number),
        )
    sizes = built.sizes.model_copy(update={"context_chars": len(context_md)})
    return Prepared(built, task_md, context_md, sizes, log)


def build_and_claim(
    doc: ContextDocument,
    settings: Settings,
    gateway: Gateway,
    *,
    context_file: Path,
    out_dir: Path,
    artifact_name: str,
    run_url: str | None,
) -> dict[str, str | bool | int]:
    """Build, claim the log issue, write the files; return the step outputs."""
    store = StateStore(gateway, settings)
    history = store.read_entries("history", limit=settings.limits.history_entries)
    memory = store.read_entries("memory")
    nonce = new_nonce()  # this run's: marks its claim, found again after a lost answer
    prepared = prepare(
        doc,
        settings,
        history=history,
        memory=memory,
        artifact_name=artifact_name,
        run_url=run_url,
        nonce=nonce,
    )
    built, log = prepared.built, prepared.log
    claim = claim_log_issue(
        gateway,
        settings,
        jobid=doc.jobid,
        title=bc.log_issue_title(doc.repo, built.task.number, doc.trigger.created_at),
        body=log.body,
        labels=[settings.labels.workflow],
        repo=doc.repo,
        since=doc.trigger.created_at - SINCE_MARGIN,
        nonce=nonce,
        already_ran=lambda: ran_before(
            gateway,
            repo=doc.repo,
            control_repo=settings.control_repo,
            trigger=doc.trigger,
            jobid=doc.jobid,
            bot=settings.bot,
            history=history,
            since=doc.trigger.created_at - SINCE_MARGIN,
        ),
    )
    actions_edge.append_summary(
        step_summary(doc, built, claim, log, sizes=prepared.sizes, artifact_name=artifact_name)
    )
    if not claim.won:
        return stopped(gateway, settings, doc, claim)
    if handed_over(gateway, settings, doc, claim, built.task.number):
        return {
            **EMPTY_OUTPUTS,
            "proceed": False,
            "jobid": doc.jobid,
            "log-issue-number": claim.number,
            "log-issue-url": claim.url,
        }
    if settings.feedback.thread_status:  # queued, on the thread that asked
        status_on_thread(gateway, settings, doc, claim.url)
    return write_outputs(
        doc,
        claim,
        settings,
        out_dir=out_dir,
        context_file=context_file,
        task_md=prepared.task_md,
        context_md=prepared.context_md,
        diff=built.diff,
        full_context=prepared.context_md if log.context_cut else None,
        artifact_name=artifact_name,
    )


def handed_over(
    gateway: Gateway,
    settings: Settings,
    doc: ContextDocument,
    claim: LogIssueClaim,
    number: int | None,
) -> bool:
    """Whether another run held the thread before this claim, and got this mention as its
    follow-up (MISSION C1)."""
    thread = thread_key(doc.repo, number)
    if thread is None:
        return False
    holder = holder_before(
        gateway,
        settings,
        thread,
        claim.number,
        sleep=gateway.sleep,
        now=gateway.server_time,  # GitHub's clock: a dead run holds nothing
    )
    if holder is None:
        return False
    hand_over(gateway, settings, doc, claim, holder)
    return True


def hand_over(
    gateway: Gateway,
    settings: Settings,
    doc: ContextDocument,
    claim: LogIssueClaim,
    holder: RunInFlight,
) -> None:
    """Another run holds the thread (MISSION C1): this mention becomes its follow-up,
    recorded on its log issue once per node. This job's own claim is kept (closed as
    completed, not released), so a re-delivery of the mention stops at it."""
    followup = followups.Followup(
        node=followups.node_key(doc.trigger.type, doc.trigger.id),
        url=doc.trigger.url,
        author=doc.actor,
        trust_level=doc.trust_level,
        trust_source=doc.trust_source,
        text=doc.trigger.body,
        permissions=doc.permission_config.model_dump(mode="json"),
    )
    followups.record(
        gateway,
        control_repo=settings.control_repo,
        log_issue=holder.number,
        followup=followup,
        bot=settings.bot,
    )
    path = f"/repos/{settings.control_repo}/issues/{claim.number}"
    gateway.post(
        f"{path}/comments",
        json={"body": f"Handed to the run in flight on the thread as a follow-up: {holder.url}"},
    )
    gateway.patch(path, json={"state": "closed", "state_reason": "completed"})
    actions_edge.notice(
        f"job {doc.jobid}: the thread's run in flight ({holder.url}) takes it as a follow-up"
    )


def stopped(
    gateway: Gateway, settings: Settings, doc: ContextDocument, claim: LogIssueClaim
) -> dict[str, str | bool | int]:
    """Another run owns the job, or its claim is gone but the job ran: stop, and say so."""
    owner = f"log issue #{claim.number} ({claim.url})" if claim.number else claim.why
    actions_edge.notice(f"job {doc.jobid} is already owned: {owner}; this run stops here")
    if not claim.number:  # its claim is gone: the thread hears why nothing happens
        say_not_again(
            gateway,
            repo=doc.repo,
            trigger=doc.trigger,
            jobid=doc.jobid,
            why=claim.why,
            bot=settings.bot,
        )
    return {
        **EMPTY_OUTPUTS,
        "proceed": False,
        "jobid": doc.jobid,
        "log-issue-number": claim.number,
        "log-issue-url": claim.url,
    }


def step_summary(
    doc: ContextDocument,
    built: bc.Built,
    claim: LogIssueClaim,
    log: lb.LogBody,
    *,
    sizes: Sizes,
    artifact_name: str,
) -> str:
    """The step summary: the task's start, the claim and what the context kept."""
    excerpt, excerpt_cut = bc.task_excerpt(built.task.text)
    return bc.render_summary(
        SummaryView(
            jobid=doc.jobid,
            task_excerpt=excerpt,
            task_cut=excerpt_cut,
            trigger_url=doc.trigger.url,
            log_issue_url=claim.url,
            log_issue_number=claim.number,
            won=claim.won,
            stopped_why=claim.why,
            sizes=sizes,
            log_body_chars=len(log.body),
            log_context_cut=log.context_cut,
            artifact_name=artifact_name if log.context_cut else None,
        )
    )


def write_outputs(
    doc: ContextDocument,
    claim: LogIssueClaim,
    settings: Settings,
    *,
    out_dir: Path,
    context_file: Path,
    task_md: str,
    context_md: str,
    diff: str | None,
    full_context: str | None,
    artifact_name: str,
) -> dict[str, str | bool | int]:
    # Absolute, so run.json means the same wherever it is read from.
    out_dir = out_dir.resolve()
    context_file = context_file.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    task_path, context_path = out_dir / TASK_FILE, out_dir / bc.CONTEXT_FILE
    task_path.write_text(task_md, encoding="utf-8")
    context_path.write_text(context_md, encoding="utf-8")
    diff_path = None
    if diff is not None:
        diff_path = out_dir / bc.DIFF_FILE
        diff_path.write_text(diff, encoding="utf-8")
    full_path = None
    if full_context is not None:
        full_path = out_dir / FULL_CONTEXT_FILE
        full_path.write_text(full_context, encoding="utf-8")
    thread_number = doc.trigger.number
    metadata = RunMetadata(
        jobid=doc.jobid,
        repo=doc.repo,
        trigger_url=doc.trigger.url,
        trigger_type=doc.trigger.type,
        thread_number=thread_number,
        log_issue_number=claim.number,
        log_issue_url=claim.url,
        control_repo=settings.control_repo,
        task_path=str(task_path),
        context_path=str(context_path),
        diff_path=str(diff_path) if diff_path else None,
        context_file=str(context_file),
        claim_nonce=claim.nonce or None,
    )
    run_path = out_dir / RUN_FILE
    run_path.write_text(metadata.model_dump_json(indent=2) + "\n", encoding="utf-8")
    print(f"job {doc.jobid}: log issue {claim.url}; files in {out_dir}", flush=True)
    return {
        "proceed": True,
        "jobid": doc.jobid,
        "log-issue-number": claim.number,
        "log-issue-url": claim.url,
        "task-path": str(task_path),
        "context-path": str(context_path),
        "diff-path": str(diff_path) if diff_path else "",
        "run-json": str(run_path),
        "full-context-path": str(full_path) if full_path else "",
        "context-cut": full_path is not None,
        "artifact-name": artifact_name,
    }
