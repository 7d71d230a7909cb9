"""The main session and its continues (MISSION A6, A7), each a pass of Claude Code
appended to one event stream, with the live status on the progress comment kept
up meanwhile. Each pass is told to the MCP server (``tusk.contracts.passes``),
which refuses tools outside it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tusk import actions_edge
from tusk.contracts.passes import write_narrowed, write_pass
from tusk.github.gateway import Gateway
from tusk.steps.run_claude import thread_status
from tusk.steps.run_claude.box import launch
from tusk.steps.run_claude.box.bwrap import CLAUDE_PATH, Box
from tusk.steps.run_claude.box.folders import RunDirs
from tusk.steps.run_claude.box.principal import Principal
from tusk.steps.run_claude.inputs import AUDIT_FILE, EVENTS_FILE, JobInputs, secret_values
from tusk.steps.run_claude.proxy.budget import budget_stop
from tusk.steps.run_claude.proxy.exchanges import Record
from tusk.steps.run_claude.proxy.metering import Meter
from tusk.steps.run_claude.session import command, continues, followups, mcp_process, run
from tusk.steps.run_claude.session.stop_watch import StopWatch
from tusk.steps.run_claude.session.watch import StopReason, StreamWatch
from tusk.steps.run_claude.writeup import kept, progress, publish, summary
from tusk.steps.run_claude.writeup.outcome import Outcome, classify
from tusk.steps.run_claude.writeup.transcript import redact


@dataclass
class RunProgress:
    """How far the run got: what a cancellation must still write up."""

    writing_up: bool = False
    session_id: str | None = None
    passes: list[tuple[str, str]] = field(default_factory=list)
    isolation: str = ""
    meter: Meter | None = None
    network: str = ""


@dataclass
class Passes:
    """The main session and its continues, all appended to one event stream."""

    inputs: JobInputs
    claude: Path
    mcp_config: Path
    env: dict[str, str]
    agent: Principal | None
    dirs: RunDirs
    meter: Meter
    lines: list[tuple[str, str]] = field(default_factory=list)
    stage: RunProgress = field(default_factory=RunProgress)
    box: Box | None = None  # the agent's box, or None: Claude Code runs without one
    # the servers the box reaches; None: the host's network
    bridges: tuple[str, ...] | None = None
    record: Record | None = None  # the run's own record: each pass goes in it
    audit_seen: int = 0  # audit records already shown in the step log
    inbox: followups.Inbox | None = None  # follow-ups from the thread (MISSION C1)
    stops: StopWatch | None = None  # ``@bot stop`` on the thread (MISSION C2)

    def _boxed(self, argv: Sequence[str]) -> list[str]:
        """Claude Code's command line in the run's box."""
        assert self.box is not None
        return self.box.claude(
            argv, claude=self.claude, cwd=self.dirs.workspace, bridges=self.bridges
        )

    def scrub(self, line: str) -> str:
        return redact(line, secret_values(self.inputs.secrets))

    @property
    def events_path(self) -> Path:
        return self.inputs.run_dir / EVENTS_FILE

    def run_all(self, prompt: str) -> tuple[Outcome, str | None]:
        settings = self.inputs.settings
        budget = self.inputs.budget_seconds or settings.limits.run_minutes * 60
        main = self._session(
            "Main session",
            prompt,
            kind=None,
            resume=None,
            server_tools=(),
            max_turns=settings.limits.max_turns,
            budget=budget,
        )
        outcome = main[0]
        watch = main[1]
        session_id = watch.session_id
        self.stage.session_id = session_id
        if session_id is None or watch.init is None:
            self._close_inbox()
            return outcome, session_id
        records, _ = summary.read_audit(self.inputs.run_dir / AUDIT_FILE)
        planned = continues.plan(outcome=outcome, messages_created=continues.messages_left(records))
        state = continues.workspace_state(launch.agent_git(self.dirs, self.agent, self.box))
        for kind in planned:
            if self.meter.exceeded:
                break  # the proxy would refuse every request of a continue
            if outcome.ok and not self._follow_up_pass(session_id, watch, budget):
                break
            text = continues.prompt(
                kind,
                trigger_url=self.inputs.run.trigger_url,
                workspace=state,
                history_chars=settings.limits.history_entry_chars,
                branch_prefix=settings.agent.branch_prefix,
            )
            step, _ = self._session(
                continues.PASS_NAMES[kind],
                text,
                kind=kind,
                resume=session_id,
                server_tools=watch.server_tools(),
                max_turns=continues.CONTINUE_MAX_TURNS[kind],
                budget=min(continues.CONTINUE_BUDGET_SECONDS, budget),
            )
            if outcome.ok and not step.ok:
                outcome = step.model_copy(
                    update={"detail": f"in {continues.PASS_NAMES[kind]}: {step.detail}"}
                )
            if not step.model_still_answers:
                break
        self._close_inbox()
        return outcome, session_id

    def _follow_up_pass(self, session_id: str, watch: StreamWatch, budget: float) -> bool:
        """Before a self-check, a safe point: follow-ups that came during the last pass
        go to the agent in a pass of their own. False when the model stopped answering."""
        messages = self.inbox.deliver("before the self-checks") if self.inbox else []
        if not messages:
            return True
        with self.events_path.open("a", encoding="utf-8") as events:  # between sessions
            for text in messages:
                events.write(command.tusk_event("followup", text=text))
        step, _ = self._session(
            "Follow-up",
            "\n\n".join(messages),
            kind=None,
            resume=session_id,
            server_tools=watch.server_tools(),
            max_turns=self.inputs.settings.limits.max_turns,
            budget=min(continues.CONTINUE_BUDGET_SECONDS, budget),
        )
        return step.model_still_answers

    def _close_inbox(self) -> None:
        if self.inbox is not None:
            self.inbox.close()

    def _session(
        self,
        name: str,
        prompt: str,
        *,
        kind: continues.ContinueKind | None,
        resume: str | None,
        server_tools: tuple[str, ...] | list[str],
        max_turns: int,
        budget: float,
    ) -> tuple[Outcome, StreamWatch]:
        settings = self.inputs.settings
        # Only the main session takes follow-ups as it goes: each self-check is a short
        # pass, and a follow-up that comes meanwhile waits for the next safe point.
        streamed = self.inbox is not None and name == "Main session"
        flags = continues.tool_flags(
            kind,
            builtin_tools=settings.agent.builtin_tools,
            server_tools=server_tools,
            server_pattern=mcp_process.server_tool_pattern(),
        )
        argv = command.claude_argv(
            Path(CLAUDE_PATH) if self.box is not None else self.claude,
            mcp_config=self.mcp_config,
            builtin_tools=flags.builtin_tools,
            allowed_tools=flags.allowed_tools,
            disallowed_tools=flags.disallowed_tools,
            max_turns=max_turns,
            model=settings.agent.model,
            resume=resume,
            streamed_input=streamed,
        )
        watch = StreamWatch(
            loop_threshold=settings.limits.loop_threshold, server_name=mcp_process.SERVER_NAME
        )
        # Told to the MCP server over the runner-only run folder: it refuses the rest.
        write_pass(
            self.inputs.run_dir,
            kind or "main",
            [continues.HISTORY_TOOL] if kind == "history" else None,
        )
        if self.record is not None:
            self.record.pass_started(name, prompt)
        with self.events_path.open("a", encoding="utf-8") as events:
            events.write(command.tusk_event("pass", name=name, prompt=prompt))
            actions_edge.group(f"Claude Code: {name}")
            try:
                ran = run.run_session(
                    argv,
                    prompt=prompt,
                    env=self.env,
                    user=self.agent,
                    cwd=self.dirs.workspace,
                    watch=watch,
                    events=events,
                    loop_file=self.inputs.run_dir / run.LOOP_FILE,
                    budget_seconds=budget,
                    stderr_path=self.inputs.run_dir / "claude-stderr.log",
                    scrub=self.scrub,
                    external_stop=lambda: (
                        budget_stop(self.meter)
                        or go_away_stop(self.inputs.run_dir)
                        or (self.stops.check() if self.stops is not None else None)
                    ),
                    box=self._boxed if self.box is not None else None,
                    followups=self._main_followups if streamed else None,
                    stall_seconds=settings.limits.stall_minutes * 60,
                )
            finally:
                actions_edge.end_group()
        outcome = classify(exit_code=ran.exit_code, result=watch.result, stop=watch.stop)
        print(pass_log_line(name, ran.seconds, outcome), flush=True)
        self.lines.append(
            (name, outcome.headline + (f" ({outcome.detail})" if outcome.detail else ""))
        )
        self.log_refusals()
        return outcome, watch

    def _main_followups(self) -> list[str]:
        assert self.inbox is not None
        messages = self.inbox.deliver("to the running session")
        if self.record is not None:
            for text in messages:  # the transcript shows what the agent was told
                self.record.pass_started("Follow-up", text)
        return messages

    def log_refusals(self) -> None:
        """The calls the MCP server refused during the last pass, in the step log."""
        records, _ = summary.read_audit(self.inputs.run_dir / AUDIT_FILE)
        for line in summary.refusal_log_lines(records[self.audit_seen :]):
            actions_edge.warning("Refused by the MCP server", detail=self.scrub(line))
        self.audit_seen = max(self.audit_seen, len(records))


def pass_log_line(name: str, seconds: float, outcome: Outcome) -> str:
    """One step-log line per pass. The detail may quote the model or the agent: kept
    on one line, it cannot start a line that the runner would read as a workflow
    command (``::set-output``, ``::stop-commands``...)."""
    detail = f": {' '.join(outcome.detail.split())}" if outcome.detail else ""
    return f"{name} ({seconds:.1f} s): {outcome.headline}{detail}"


def run_passes(inputs: JobInputs, passes: Passes, prompt: str) -> tuple[Outcome, str | None]:
    """The sessions, with the live status on the progress comment kept up meanwhile."""
    reporter = _progress_reporter(inputs, passes.meter)
    final = "❌ The run stopped before it finished."
    try:
        outcome, session_id = passes.run_all(prompt)
        final = final_status(outcome)
    finally:
        if reporter is not None:
            reporter.stop(final)
            reporter.gateway.close()
    return outcome, session_id


def final_status(outcome: Outcome) -> str:
    """The progress comment's last line."""
    return f"{outcome.mark} {outcome.headline}."


def _progress_reporter(inputs: JobInputs, meter: Meter) -> progress.ProgressReporter | None:
    """The live status on the run's progress comment, updated while the agent works."""
    state = publish.load_state(inputs.run_dir)
    if state is None or state.progress_comment_id is None:
        return None
    token = inputs.secrets.require("agent_token")["agent_token"]
    gateway = Gateway(
        api_url=inputs.secrets.github_api_url, token=token, token_name="agent", max_attempts=2
    )
    reporter = progress.ProgressReporter(
        gateway,
        repo=inputs.run.control_repo,
        comment_id=state.progress_comment_id,
        run_dir=inputs.run_dir,
        spend=meter.spend,
        mirror=thread_status.mirror(
            gateway,
            inputs.settings,
            inputs.run,
            note=state.facts.resume_on_thread if state.facts else "",
        ),
    )
    reporter.start()
    return reporter


def follow_up_inbox(inputs: JobInputs) -> followups.Inbox | None:
    """Where the run finds its follow-ups: its log issue, read with the agent token. A
    narrowing goes to the MCP server through the runner-only run folder."""
    doc = kept.context_document(inputs)
    token = inputs.secrets.agent_token
    if doc is None or token is None:
        return None
    gateway = Gateway(
        api_url=inputs.secrets.github_api_url, token=token, token_name="agent", max_attempts=2
    )
    return followups.Inbox(
        gateway=gateway,
        run=inputs.run,
        bot=inputs.settings.bot,
        permissions=doc.permission_config,
        on_narrow=lambda permissions: write_narrowed(inputs.run_dir, permissions),
    )


def stop_watch(inputs: JobInputs) -> StopWatch | None:
    """The run's watch for a stop recorded on its log issue, read with the agent token
    at the MCP server's blocklist-check interval."""
    token = inputs.secrets.agent_token
    if token is None:
        return None
    gateway = Gateway(
        api_url=inputs.secrets.github_api_url, token=token, token_name="agent", max_attempts=2
    )
    return StopWatch(
        gateway=gateway,
        run=inputs.run,
        bot=inputs.settings.bot,
        run_dir=inputs.run_dir,
        interval=inputs.settings.limits.blocklist_check_seconds,
    )


def go_away_stop(run_dir: Path) -> StopReason | None:
    """The MCP server saw the trigger's repository send the bot away mid-run (G4): it
    refuses every further write, so the session ends here, cleanly."""
    path = run_dir / run.GO_AWAY_FILE
    if not path.is_file():
        return None
    try:
        reason = str(json.loads(path.read_text(encoding="utf-8")).get("reason") or "")
    except (OSError, ValueError, AttributeError):
        reason = ""
    return StopReason(
        "go_away",
        (reason or "the repository sent the bot away during the run") + "; "
        "the MCP server refuses every further write",
    )
