"""One agent run from start to write-up: the order of the steps, nothing more.

isolate (``box``) → workspace → MCP server → model proxy → network → main session
and continues (``session``) → write-up on the log issue (``writeup``) → tear down.
Each step lives in its own sub-package; this module only sequences them. What the
cleanup step needs is recorded in the run folder as the run goes
(``RUN_DIR/cleanup.json``, ``RUN_DIR/writeup.json``) in case this process dies.
SIGTERM/SIGINT (``session.cancel``) stop the agent and write up the outcome
``cancelled``; the clean-up step completes a write-up that SIGKILL cut short.
"""

from __future__ import annotations

import secrets as secrets_module
from pathlib import Path

from tusk import actions_edge
from tusk.github.gateway import Gateway
from tusk.steps.run_claude import limits_check, resume
from tusk.steps.run_claude.box import after_crash, launch, place
from tusk.steps.run_claude.box.principal import AGENT_SHELL
from tusk.steps.run_claude.inputs import JobInputs, JobResult
from tusk.steps.run_claude.proxy import budget
from tusk.steps.run_claude.proxy.exchanges import RECORD_FILE, Record
from tusk.steps.run_claude.proxy.prior import PriorTurns
from tusk.steps.run_claude.session import mcp_process
from tusk.steps.run_claude.session.cancel import Cancellation, Cancelled
from tusk.steps.run_claude.session.passes import (
    Passes,
    RunProgress,
    follow_up_inbox,
    run_passes,
    stop_watch,
)
from tusk.steps.run_claude.workspace import prepare
from tusk.steps.run_claude.writeup import kept as record
from tusk.steps.run_claude.writeup.outcome import cancelled


def run_job(inputs: JobInputs, cancel: Cancellation | None = None) -> JobResult:
    """The whole run. A failure before the write-up still reaches the log issue
    (error comment, bug label) before it propagates; a cancellation (``Cancelled``,
    raised by ``cancel``'s signal handlers) stops the agent and is written up."""
    cancel = cancel if cancel is not None else Cancellation()
    record.start_state(inputs)
    stage = RunProgress()
    try:
        if not record.report_started(inputs):
            return record.taken_over(inputs)
        doc = record.context_document(inputs)
        checked = limits_check.recheck(inputs.secrets, inputs.settings, inputs.run, doc)
        if checked.outcome is not None:
            return record.write_up(
                inputs, outcome=checked.outcome, session_id=None, passes=[], isolation_note=""
            )
        if doc is not None:  # the run's own budget, turns and minutes from here on
            inputs = record.settle_limits(inputs, doc, checked.requester_left_usd)
        return _run(inputs, stage, cancel)
    except Cancelled as stop:
        cancel.shield()
        actions_edge.warning(
            "The run was cancelled",
            detail=f"{stop.signal_name} received; Claude Code was stopped. Writing up.",
        )
        return record.write_up(
            inputs,
            outcome=cancelled(stop.signal_name),
            session_id=stage.session_id,
            passes=stage.passes,
            isolation_note=stage.isolation,
            spend=stage.meter.spend() if stage.meter is not None else None,
            network=stage.network,
        )
    except Exception as error:
        if not stage.writing_up:
            cancel.shield()
            record.report_setup_failure(inputs, error)
        raise


def _run(inputs: JobInputs, stage: RunProgress, cancel: Cancellation) -> JobResult:
    needed = inputs.secrets.require("agent_token", "read_token")
    credentials = budget.model_credentials(inputs.secrets)
    decision = place.isolation_decision(inputs)
    stage.isolation = decision.reason
    placed = place.place(inputs, decision)
    stage.isolation, stage.network = placed.isolation_note, placed.network.status
    services = place.Services()
    meter = stage.meter = budget.run_meter(inputs.settings)
    mcp_bearer = secrets_module.token_urlsafe(32)  # this run's MCP endpoint only
    try:
        prompt, claude = prepare.prepare(inputs, placed, read_token=needed["read_token"])
        git = launch.agent_git(placed.dirs, placed.agent, placed.box)
        services.server = mcp_process.start_for_run(
            inputs, runner=placed.runner, git=git, tokens=needed, bearer=mcp_bearer
        )
        evidence = Record(inputs.run_dir / RECORD_FILE)  # what the transcript is built from
        evidence.task(inputs.resolve(inputs.run.task_path).read_text(encoding="utf-8"))
        # The earlier runs on the thread, from their verified records: the proxy puts
        # them before the run's own turns; Claude Code never holds them.
        resumed = resume.load_for(inputs.secrets, inputs.settings, inputs.run)
        record.note_resume(inputs, resumed.note, resumed.thread_note)
        prior = PriorTurns(resumed.turns, anchor=prompt.split("\n", 1)[0])
        proxy = services.proxy = budget.model_proxy(
            inputs.settings, inputs.anthropic_base_url, credentials, meter, evidence, prior
        )
        proxy.start()
        network = place.settle_network(inputs, placed, services)
        stage.network = network.status
        reach = place.endpoints(placed, services, network)
        mcp_config = mcp_process.write_mcp_config(
            placed.dirs.mcp_config, reach.mcp, bearer=mcp_bearer, owner=placed.owner
        )
        env = launch.agent_env(
            home=placed.dirs.home,
            tmp=placed.dirs.tmp,
            model_proxy_url=reach.model,
            model_key=proxy.client_key,
            max_retries=inputs.max_retries,
            egress_proxy_url=reach.egress,
            shell=placed.box.shell if placed.box is not None else AGENT_SHELL,
        )
        passes = Passes(
            inputs=inputs,
            claude=claude,
            mcp_config=mcp_config,
            env=env,
            agent=placed.agent,
            dirs=placed.dirs,
            meter=meter,
            lines=stage.passes,
            stage=stage,
            box=placed.box,
            bridges=place.bridged(services) if network.fenced else None,
            record=evidence,
            inbox=follow_up_inbox(inputs),
            stops=stop_watch(inputs),
        )
        outcome, session_id = run_passes(inputs, passes, prompt)
        services.stop_servers()
        spend = meter.spend()
        budget.save_spend(inputs.run_dir, spend)
        cancel.shield()  # from here on a signal cannot cut the write-up short
        stage.writing_up = True
        return record.write_up(
            inputs,
            outcome=outcome,
            session_id=session_id,
            passes=passes.lines,
            isolation_note=placed.isolation_note,
            spend=spend,
            network=network.status,
        )
    finally:
        place.tear_down(inputs.run_dir, placed, services)


def cleanup(
    run_dir: Path, *, gateway: Gateway | None = None, secrets: list[str] | None = None
) -> list[str]:
    """The ``if: always()`` step: whatever a crashed run left behind, and only what this
    run made (its MCP server, its own user's processes, folder and user); then the
    write-up if the run step did not finish it (SIGKILL, a lost runner). Returns what
    it did."""
    return [
        *after_crash.clean(run_dir),
        *record.finish_writeup(run_dir, gateway=gateway, secrets=secrets),
    ]
