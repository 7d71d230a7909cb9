"""One agent run from start to write-up: the order of the steps, nothing more.

isolate → workspace → MCP server → main session (watched) → continues →
write-up on the log issue → clean up. Each step lives in its own module; this
one only sequences them and records what the cleanup step needs
(``RUN_DIR/cleanup.json``, ``RUN_DIR/writeup.json``) in case this process
dies. SIGTERM/SIGINT (``cancel``) stop the agent and write up the outcome
``cancelled``; the clean-up step completes a write-up that SIGKILL cut short.
"""

from __future__ import annotations

import json
import os
import pwd
import secrets as secrets_module
import signal
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import SecretStr

from tusk import actions_edge
from tusk.contracts.config import Secrets, Settings
from tusk.contracts.models import ContextDocument, RunMetadata
from tusk.contracts.passes import write_pass
from tusk.contracts.pricing import Spend
from tusk.errors import UserError
from tusk.git.agent import AgentGit, broker_pair
from tusk.github.gateway import Gateway
from tusk.github.once import new_nonce
from tusk.issues.lease import report_progress
from tusk.issues.run_facts import run_facts
from tusk.steps.run_claude import (
    continues,
    egress,
    fence,
    finish,
    isolation,
    limits_check,
    mcp_process,
    progress,
    session,
    writeup,
)
from tusk.steps.run_claude.cancel import Cancellation, Cancelled
from tusk.steps.run_claude.isolation import Principal, RunDirs
from tusk.steps.run_claude.metering import Meter
from tusk.steps.run_claude.model_proxy import Credentials, ModelProxy, RequestGuard
from tusk.steps.run_claude.network import NetworkPlan, open_by_need, plan_network
from tusk.steps.run_claude.outcome import Outcome, cancelled, classify
from tusk.steps.run_claude.transcript import redact
from tusk.steps.run_claude.watch import StopReason, StreamWatch
from tusk.text.render import render

CLEANUP_FILE = "cleanup.json"
SPEND_FILE = "spend.json"
EVENTS_FILE = "events.jsonl"
AUDIT_FILE = "audit.jsonl"
STAGED_FILE = "staged.jsonl"


@dataclass(frozen=True)
class JobInputs:
    run: RunMetadata
    run_json: Path
    settings: Settings
    config_path: Path | None
    secrets: Secrets
    anthropic_base_url: str | None
    claude: Path
    run_dir: Path
    max_retries: int
    environ: Mapping[str, str]
    budget_seconds: float | None = None

    def resolve(self, path: str) -> Path:
        """run.json's paths are absolute or relative to run.json itself."""
        candidate = Path(path)
        return candidate if candidate.is_absolute() else self.run_json.parent / candidate


@dataclass
class JobResult:
    outcome: Outcome
    session_id: str | None = None
    comment_urls: list[str] = field(default_factory=list)
    isolation: str = ""
    events_path: Path | None = None
    spend: Spend | None = None
    network: str = ""
    writeup_complete: bool = True
    writeup_failed: list[str] = field(default_factory=list)
    reason: str = ""

    @property
    def ok(self) -> bool:
        """The run ended as it should (completed, or sent away mid-run: its log issue
        closes either way) and its write-up is whole."""
        return self.outcome.closes_as is not None and self.writeup_complete

    @property
    def skipped(self) -> bool:
        """Another delivery took the job over before this run started: nothing to do."""
        return self.outcome.kind == "taken_over"


@dataclass
class _Stage:
    """How far the run got: what a cancellation must still write up."""

    writing_up: bool = False
    session_id: str | None = None
    passes: list[tuple[str, str]] = field(default_factory=list)
    isolation: str = ""
    meter: Meter | None = None
    network: str = ""


def run_job(inputs: JobInputs, cancel: Cancellation | None = None) -> JobResult:
    """The whole run. A failure before the write-up still reaches the log issue
    (error comment, bug label) before it propagates; a cancellation (``Cancelled``,
    raised by ``cancel``'s signal handlers) stops the agent and is written up."""
    cancel = cancel if cancel is not None else Cancellation()
    _start_writeup_state(inputs)
    stage = _Stage()
    try:
        if not _report_progress(inputs):
            return _taken_over(inputs)
        over = limits_check.recheck(
            inputs.secrets, inputs.settings, inputs.run, _context_document(inputs)
        )
        if over is not None:
            return _write_up(inputs, outcome=over, session_id=None, passes=[], isolation_note="")
        return _run(inputs, stage, cancel)
    except Cancelled as stop:
        cancel.shield()
        actions_edge.warning(
            "The run was cancelled",
            detail=f"{stop.signal_name} received; Claude Code was stopped. Writing up.",
        )
        return _write_up(
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
            report_setup_failure(inputs, error)
        raise


def _report_progress(inputs: JobInputs) -> bool:
    """Say on the log issue that the run has started (``tusk.issues.lease``); False when a later
    delivery took the claim over first, so this run must not go on."""
    state = writeup.load_state(inputs.run_dir)
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
    writeup.save_state(inputs.run_dir, state)
    return status != "dead"


def _taken_over(inputs: JobInputs) -> JobResult:
    state = writeup.load_state(inputs.run_dir)
    assert state is not None
    state.complete = True  # nothing of ours to write up: the clean-up step must not either
    writeup.save_state(inputs.run_dir, state)
    reason = (
        f"a later delivery of job {inputs.run.jobid} took over log issue "
        f"{inputs.run.log_issue_url} before this run reported progress; this run stops"
    )
    actions_edge.notice(reason)
    outcome = Outcome(kind="taken_over", headline="Taken over by a later delivery", detail=reason)
    return JobResult(outcome=outcome, reason=reason)


def _start_writeup_state(inputs: JobInputs) -> None:
    """Keep what a write-up needs in the run folder from the start, so the clean-up
    step can write the run up if this process is killed."""
    run_dir = inputs.run_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(run_dir, 0o700)
    if writeup.load_state(run_dir) is None:
        doc = _context_document(inputs)
        writeup.save_state(
            run_dir,
            writeup.WriteUpState(
                run=inputs.run,
                bot=inputs.settings.bot,
                bug_label=inputs.settings.labels.bug,
                nonce=new_nonce(),
                facts=run_facts(doc, inputs.settings) if doc is not None else None,
                trigger=doc.trigger if doc is not None else None,
            ),
        )


def _context_document(inputs: JobInputs) -> ContextDocument | None:
    """The job's context document (who asked, the trigger), if it can be read."""
    try:
        text = inputs.resolve(inputs.run.context_file).read_text(encoding="utf-8")
        return ContextDocument.model_validate_json(text)
    except (OSError, ValueError):
        return None


@dataclass(frozen=True)
class _Placement:
    """Where and as whom the agent runs: decided and made before anything is started."""

    isolation_note: str
    network: NetworkPlan
    runner: Principal
    agent: Principal | None  # this run's own user; None without isolation
    owner: Principal  # who owns the agent's folders: the agent, or this process's user
    dirs: RunDirs
    # The tools that confine the agent (``confinement``), or None: one decision for
    # Claude Code and for git run as the agent.
    confine: Mapping[str, str] | None = None


@dataclass
class _Services:
    """What this run starts beside the agent, each stopped whatever happens."""

    fenced: fence.Fence
    server: mcp_process.McpServer | None = None
    proxy: ModelProxy | None = None
    egress_proxy: egress.EgressProxy | None = None

    def stop_servers(self) -> None:
        if self.server is not None:
            self.server.stop()
        if self.proxy is not None:
            self.proxy.stop()


def _run(inputs: JobInputs, stage: _Stage, cancel: Cancellation) -> JobResult:
    needed = inputs.secrets.require("agent_token", "read_token")
    credentials = model_credentials(inputs.secrets)
    place = _place(inputs, stage)
    services = _Services(fenced=fence.Fence(fence.tools()))
    meter = Meter(
        budget_usd=inputs.settings.agent.max_budget_usd,
        prices=inputs.settings.agent.prices,
        on_exceeded=announce_budget,
    )
    stage.meter = meter
    mcp_bearer = secrets_module.token_urlsafe(32)  # this run's MCP endpoint only
    try:
        prompt, claude = _prepare_workspace(inputs, place, read_token=needed["read_token"])
        server = _start_mcp_server(inputs, place, tokens=needed, bearer=mcp_bearer)
        services.server = server
        mcp_config = mcp_process.write_mcp_config(
            place.dirs.mcp_config, server.url, bearer=mcp_bearer, owner=place.owner
        )
        proxy = _model_proxy(inputs, credentials, meter)
        services.proxy = proxy
        proxy_url = proxy.start()
        network = _settle_network(inputs, place, services)
        stage.network = network.status
        env = isolation.agent_env(
            home=place.dirs.home,
            model_proxy_url=proxy_url,
            model_key=proxy.client_key,
            max_retries=inputs.max_retries,
            egress_proxy_url=services.egress_proxy.url if services.egress_proxy else None,
        )
        passes = _Passes(
            inputs=inputs,
            claude=claude,
            mcp_config=mcp_config,
            env=env,
            agent=place.agent,
            dirs=place.dirs,
            meter=meter,
            lines=stage.passes,
            stage=stage,
            confine=place.confine,
        )
        outcome, session_id = _run_passes(inputs, passes, prompt)
        services.stop_servers()
        return _conclude(
            inputs,
            stage,
            cancel,
            outcome=outcome,
            session_id=session_id,
            passes=passes,
            place=place,
            network=network,
        )
    finally:
        _tear_down(inputs.run_dir, place, services)


def _place(inputs: JobInputs, stage: _Stage) -> _Placement:
    """Decide isolation and the network, then make this run's user and its folders."""
    decision = isolation.decide(
        in_actions=isolation.isolation_required(inputs.environ), euid=os.geteuid()
    )
    stage.isolation = decision.reason
    if not decision.enabled:
        actions_edge.warning("User isolation is off", detail=decision.reason)
    network = decide_network(inputs.settings, isolated=decision.enabled)
    stage.network = network.status
    runner = isolation.runner_principal(inputs.environ)
    _own_run_dir(inputs.run_dir, runner)
    agent = _create_agent(inputs, runner) if decision.enabled else None
    owner = agent or isolation.current_principal()
    dirs = _agent_dirs(inputs.run_dir, agent, owner)
    return _Placement(decision.reason, network, runner, agent, owner, dirs, confinement(agent))


def _own_run_dir(run_dir: Path, runner: Principal) -> None:
    """The run folder: the runner's user's alone."""
    run_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(run_dir, 0o700)
    if runner.uid != os.getuid():
        os.chown(run_dir, runner.uid, runner.gid)


def _create_agent(inputs: JobInputs, runner: Principal) -> Principal:
    """This run's own user, recorded at once so that even a crash leaves it to cleanup."""
    agent = isolation.create_run_user(
        inputs.settings.agent.linux_user,
        isolation.run_key(inputs.environ),
        forbidden_uids=(runner.uid,),
    )
    _record_cleanup(inputs.run_dir, agent_user=agent.name, agent_uid=agent.uid)
    return agent


def _agent_dirs(run_dir: Path, agent: Principal | None, owner: Principal) -> RunDirs:
    """The agent's home and workspace; the run's user goes again if they cannot be made."""
    base = isolation.agent_base(agent) if agent else run_dir / "agent"
    try:
        dirs = isolation.prepare_run_dirs(base, agent=owner)
    except Exception:
        if agent is not None:
            isolation.delete_run_user(agent)
        raise
    _record_cleanup(run_dir, base=str(dirs.base))
    return dirs


def _guarded_dirs(environ: Mapping[str, str], runner: Principal, run_dir: Path) -> list[Path]:
    """The runner's folders the agent's user must not read or write."""
    named = [Path(environ[key]) for key in _RUNNER_DIRS if environ.get(key)]
    return [*named, runner.home, run_dir]


def _prepare_workspace(
    inputs: JobInputs, place: _Placement, *, read_token: SecretStr
) -> tuple[str, Path]:
    """Close the runner's folders to the agent, lay out the context and the clone; the
    first prompt and the Claude Code binary the agent can run."""
    run_dir = inputs.run_dir
    if place.agent is not None:
        isolation.close_to_others(
            _guarded_dirs(inputs.environ, place.runner, run_dir), user=place.agent
        )
    # The MCP server finds the log issue it stamps on every post in RUN_DIR/run.json.
    (run_dir / "run.json").write_text(inputs.run.model_dump_json(indent=2), encoding="utf-8")
    prompt = _prepare_context(inputs, place.dirs)
    _clone(inputs, place.dirs, runner=place.runner, agent=place.agent, read_token=read_token)
    claude = isolation.reachable_claude(inputs.claude, agent=place.owner, dirs=place.dirs)
    return prompt, claude


def _start_mcp_server(
    inputs: JobInputs, place: _Placement, *, tokens: Mapping[str, SecretStr], bearer: str
) -> mcp_process.McpServer:
    """The MCP server as the runner's user, with its bundle broker; recorded for cleanup."""
    run_dir = inputs.run_dir
    config = inputs.config_path.resolve() if inputs.config_path else None
    # push_branch's bundles are made here, by git run as the workspace's owner (this
    # process is root under isolation); the server only gets them over a socket.
    broker, server_end = broker_pair(agent_git(place.dirs, place.agent, place.confine))
    broker.start()
    server = mcp_process.start_mcp_server(
        run_dir=run_dir,
        context_file=inputs.resolve(inputs.run.context_file),
        bundle_socket=server_end,
        config=config,
        env=mcp_process.mcp_server_env(
            runner=place.runner,
            tokens={
                "TUSK_AGENT_TOKEN": tokens["agent_token"].get_secret_value(),
                "TUSK_READ_TOKEN": tokens["read_token"].get_secret_value(),
            },
            api_url=inputs.secrets.github_api_url,
            config=config,
            bearer=bearer,
        ),
        runner=place.runner,
        log_path=run_dir / "mcp-server.log",
    )
    server_end.close()  # the server holds its own copy; the broker ends when it exits
    _record_cleanup(run_dir, mcp_pid=server.process.pid)
    return server


def _model_proxy(inputs: JobInputs, credentials: Credentials, meter: Meter) -> ModelProxy:
    """The real key stays in this process: Claude Code talks to the proxy with this run's
    own proxy key. Until the fence is known to be up, the proxy lets the API reach
    nothing for the agent (fenced) either."""
    guard = RequestGuard(fenced=True, web_search="WebSearch" in inputs.settings.agent.builtin_tools)
    return ModelProxy(
        upstream=inputs.anthropic_base_url, credentials=credentials, meter=meter, guard=guard
    )


def _settle_network(inputs: JobInputs, place: _Placement, services: _Services) -> NetworkPlan:
    """Put the fence up where planned (or open where the settings allow it when it cannot
    be), then let the model proxy's guard follow what the network really is."""
    network = place.network
    assert services.proxy is not None and services.server is not None  # started before
    if network.fenced and place.agent is not None:
        network, services.egress_proxy = _put_up_fence(
            network,
            services.fenced,
            settings=inputs.settings,
            agent=place.agent,
            run_dir=inputs.run_dir,
            runner=place.runner,
            ports=(services.proxy.port, mcp_process.port_of(services.server.url)),
        )
    services.proxy.guard.fenced = network.fenced
    actions_edge.notice(f"Agent network: {network.status}")
    return network


def _run_passes(inputs: JobInputs, passes: _Passes, prompt: str) -> tuple[Outcome, str | None]:
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
    return ("✅ " if outcome.ok else "❌ ") + outcome.headline + "."


def _conclude(
    inputs: JobInputs,
    stage: _Stage,
    cancel: Cancellation,
    *,
    outcome: Outcome,
    session_id: str | None,
    passes: _Passes,
    place: _Placement,
    network: NetworkPlan,
) -> JobResult:
    """Record the spend and write the run up, past the reach of a cancelling signal."""
    spend = passes.meter.spend()
    _save_spend(inputs.run_dir, spend)
    cancel.shield()  # from here on a signal cannot cut the write-up short
    stage.writing_up = True
    return _write_up(
        inputs,
        outcome=outcome,
        session_id=session_id,
        passes=passes.lines,
        isolation_note=place.isolation_note,
        spend=spend,
        network=network.status,
    )


def _tear_down(run_dir: Path, place: _Placement, services: _Services) -> None:
    """Stop what the run started, end the agent's processes, lift its fence, remove its
    traces and its user: in this order, whatever state the run ended in."""
    services.stop_servers()
    agent = place.agent
    if agent is not None:
        isolation.end_processes_of(agent)
        services.fenced.remove(agent.uid)  # before the uid can go to another run's user
        _record_cleanup(run_dir, fence_uid=None)  # the cleanup step must not touch it
    if services.egress_proxy is not None:
        services.egress_proxy.stop()
    isolation.remove_agent_traces(place.dirs, agent)
    if agent is not None:
        isolation.delete_run_user(agent)  # its unique name is never seen again


def _progress_reporter(inputs: JobInputs, meter: Meter) -> progress.ProgressReporter | None:
    """The live status on the run's progress comment, updated while the agent works."""
    state = writeup.load_state(inputs.run_dir)
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
    )
    reporter.start()
    return reporter


def model_credentials(secrets: Secrets) -> Credentials:
    """The model API's credentials, held by the model proxy alone."""
    if secrets.anthropic_api_key is None and secrets.anthropic_auth_token is None:
        secrets.require("anthropic_api_key")  # raises, naming the variable
    return Credentials(api_key=secrets.anthropic_api_key, auth_token=secrets.anthropic_auth_token)


def decide_network(settings: Settings, *, isolated: bool) -> NetworkPlan:
    """Fenced, or open and why; raises when the fence is required and cannot be put up."""
    found = fence.tools()
    if egress.binary() is None:
        found = {**found, "tinyproxy": None}
    reason = fence.unavailable_reason(euid=os.geteuid(), isolated=isolated, found=found)
    if reason is None and settings.agent.network != "open":
        reason = fence.probe(found)
    plan = plan_network(settings.agent, unavailable=reason)
    if plan.warning:
        actions_edge.warning("The agent's network is not fenced", detail=plan.warning)
    return plan


def _put_up_fence(
    network: NetworkPlan,
    fenced: fence.Fence,
    *,
    settings: Settings,
    agent: Principal,
    run_dir: Path,
    runner: Principal,
    ports: tuple[int, ...],
) -> tuple[NetworkPlan, egress.EgressProxy | None]:
    """The egress proxy, then the rules for this run's uid. A failure here is the fence
    not being possible after all: open only where the settings allow it."""
    started: egress.EgressProxy | None = None
    try:
        started = egress.start(
            network.hosts,
            run_dir=run_dir,
            spawn=isolation.spawn_as(runner if runner.uid != 0 else None),
        )
        _record_cleanup(run_dir, egress_pid=started.pid, egress_config=str(started.config))
        _record_cleanup(run_dir, fence_uid=agent.uid)  # before the first rule goes in
        fenced.apply(fence.FencePlan(uid=agent.uid, ports=(*ports, started.port)))
        return network, started
    except (egress.EgressError, fence.FenceError) as error:
        if started is not None:
            started.stop()
        return open_by_need(settings.agent, f"{error.title}. {error.hint}"), None


def confinement(agent: Principal | None) -> Mapping[str, str] | None:
    """The tools that put the agent in its own mount namespace, where the local sockets
    that reach the network (DNS over D-Bus, snapd...) are covered up; None without an
    agent user, or, said in the step log, where util-linux lacks them or the kernel
    refuses them."""
    if agent is None or os.geteuid() != 0:
        return None
    tools = isolation.confinement_tools()
    exposed = (
        "so local services that reach the network over a Unix socket (systemd-resolved, "
        "snapd) stay reachable to the agent."
    )
    if tools is None:
        actions_edge.warning(
            "The agent runs without its own mount namespace",
            detail=f"unshare, setpriv or mount (util-linux) is missing, {exposed} "
            "Install util-linux.",
        )
        return None
    problem = isolation.confinement_problem(agent, tools=tools)
    if problem is not None:
        actions_edge.warning(
            "The agent runs without its own mount namespace",
            detail=f"it could not be made here ({problem}), {exposed} In a container, "
            "give the runner CAP_SYS_ADMIN or run it on the host.",
        )
        return None
    return tools


def budget_stop(meter: Meter) -> StopReason | None:
    spend = meter.spend()
    if not spend.exceeded:
        return None
    return StopReason("budget", f"budget exceeded: {spend.line()} (agent.max_budget_usd)")


def agent_git(
    dirs: RunDirs, agent: Principal | None, confine: Mapping[str, str] | None
) -> AgentGit:
    """git in the workspace as the agent: the user named here, never whoever the path
    turns out to belong to (the agent owns its home, so it could re-point the folders
    above the workspace), and in the agent's confinement like the agent itself. Without
    isolation, as this process, like the agent itself."""
    if agent is None:
        return AgentGit(dirs.workspace)
    if confine is None:
        return AgentGit(dirs.workspace, uid=agent.uid, gid=agent.gid)
    return AgentGit(
        dirs.workspace,
        uid=agent.uid,
        gid=agent.gid,
        confine=lambda argv: isolation.confined(argv, agent, tools=confine),
    )


def go_away_stop(run_dir: Path) -> StopReason | None:
    """The MCP server saw the trigger's repository send the bot away mid-run (G4): it
    refuses every further write, so the session ends here, cleanly."""
    path = run_dir / session.GO_AWAY_FILE
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


def announce_budget(spend: Spend) -> None:
    actions_edge.error("Model budget exceeded", detail=f"budget exceeded: {spend.line()}")


def _save_spend(run_dir: Path, spend: Spend) -> None:
    (run_dir / SPEND_FILE).write_text(spend.model_dump_json(indent=2) + "\n", encoding="utf-8")


def secret_values(secrets: Secrets) -> list[str]:
    """Every secret this run holds, for redaction."""
    held = (
        secrets.agent_token,
        secrets.read_token,
        secrets.anthropic_api_key,
        secrets.anthropic_auth_token,
        secrets.bot_token,
        secrets.dispatch_token,
    )
    return [value.get_secret_value() for value in held if value is not None]


_RUNNER_DIRS = ("RUNNER_TEMP", "GITHUB_WORKSPACE", "RUNNER_TOOL_CACHE")


def _prepare_context(inputs: JobInputs, dirs: RunDirs) -> str:
    """Copy the context files where the agent can read them; build the first prompt."""
    run = inputs.run
    task = inputs.resolve(run.task_path).read_text(encoding="utf-8")
    context = inputs.resolve(run.context_path).read_text(encoding="utf-8")
    diff_path = None
    if run.diff_path:
        source = inputs.resolve(run.diff_path)
        if source.is_file():
            diff_path = str(isolation.place_context_file(dirs, source, "diff.patch"))
    return render(
        "run_prompt.md.j2",
        repo=run.repo,
        task=task,
        context=context,
        diff_path=diff_path,
        branch_prefix=inputs.settings.agent.branch_prefix,
        tool_prefix=f"mcp__{mcp_process.SERVER_NAME}__",
    )


def _clone(
    inputs: JobInputs,
    dirs: RunDirs,
    *,
    runner: Principal,
    agent: Principal | None,
    read_token: SecretStr,
) -> None:
    gateway = Gateway(api_url=inputs.secrets.github_api_url, token=read_token, token_name="read")
    try:
        repo = gateway.get(f"/repos/{inputs.run.repo}")
    finally:
        gateway.close()
    isolation.clone_workspace(
        clone_url=str(repo["clone_url"]),
        token=read_token,
        dest=dirs.workspace,
        runner=runner,
        agent=agent,
        committer=inputs.settings.bot,
    )


@dataclass
class _Passes:
    """The main session and its continues, all appended to one event stream."""

    inputs: JobInputs
    claude: Path
    mcp_config: Path
    env: dict[str, str]
    agent: Principal | None
    dirs: RunDirs
    meter: Meter
    lines: list[tuple[str, str]] = field(default_factory=list)
    stage: _Stage = field(default_factory=_Stage)
    confine: Mapping[str, str] | None = None  # isolation.confinement_tools()
    audit_seen: int = 0  # audit records already shown in the step log

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
            return outcome, session_id
        records, _ = finish.read_audit(self.inputs.run_dir / AUDIT_FILE)
        planned = continues.plan(outcome=outcome, messages_created=continues.messages_left(records))
        state = continues.workspace_state(agent_git(self.dirs, self.agent, self.confine))
        for kind in planned:
            if self.meter.exceeded:
                break  # the proxy would refuse every request of a continue
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
        return outcome, session_id

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
        flags = continues.tool_flags(
            kind,
            builtin_tools=settings.agent.builtin_tools,
            server_tools=server_tools,
            server_pattern=mcp_process.server_tool_pattern(),
        )
        argv = session.claude_argv(
            self.claude,
            mcp_config=self.mcp_config,
            builtin_tools=flags.builtin_tools,
            allowed_tools=flags.allowed_tools,
            disallowed_tools=flags.disallowed_tools,
            max_turns=max_turns,
            model=settings.agent.model,
            resume=resume,
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
        with self.events_path.open("a", encoding="utf-8") as events:
            events.write(session.tusk_event("pass", name=name, prompt=prompt))
            actions_edge.group(f"Claude Code: {name}")
            try:
                ran = session.run_session(
                    argv,
                    prompt=prompt,
                    env=self.env,
                    user=self.agent,
                    cwd=self.dirs.workspace,
                    watch=watch,
                    events=events,
                    loop_file=self.inputs.run_dir / session.LOOP_FILE,
                    budget_seconds=budget,
                    stderr_path=self.inputs.run_dir / "claude-stderr.log",
                    scrub=self.scrub,
                    external_stop=lambda: (
                        budget_stop(self.meter) or go_away_stop(self.inputs.run_dir)
                    ),
                    confine=self.confine,
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

    def log_refusals(self) -> None:
        """The calls the MCP server refused during the last pass, in the step log."""
        records, _ = finish.read_audit(self.inputs.run_dir / AUDIT_FILE)
        for line in finish.refusal_log_lines(records[self.audit_seen :]):
            actions_edge.warning("Refused by the MCP server", detail=self.scrub(line))
        self.audit_seen = max(self.audit_seen, len(records))


def pass_log_line(name: str, seconds: float, outcome: Outcome) -> str:
    """One step-log line per pass. The detail may quote the model or the agent: kept
    on one line, it cannot start a line that the runner would read as a workflow
    command (``::set-output``, ``::stop-commands``...)."""
    detail = f": {' '.join(outcome.detail.split())}" if outcome.detail else ""
    return f"{name} ({seconds:.1f} s): {outcome.headline}{detail}"


def _write_up(
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
    state = writeup.load_state(run_dir)
    assert state is not None  # run_job wrote it first
    state.outcome = outcome
    state.session_id = session_id
    state.passes = list(passes)
    state.isolation = isolation_note
    state.spend = spend
    state.network = network
    writeup.save_state(run_dir, state)
    state, report = _publish(inputs, run_dir)
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
        reason=writeup.describe(state, report),
    )


def _publish(inputs: JobInputs, run_dir: Path) -> tuple[writeup.WriteUpState, writeup.Report]:
    token = inputs.secrets.require("agent_token")["agent_token"]
    gateway = Gateway(api_url=inputs.secrets.github_api_url, token=token, token_name="agent")
    try:
        state, report = writeup.write_up(run_dir, gateway, secrets=secret_values(inputs.secrets))
    finally:
        gateway.close()
    report_writeup(state, report)
    return state, report


def report_writeup(state: writeup.WriteUpState, report: writeup.Report) -> None:
    """The write-up in the step log and summary: each part, and a failed one loudly."""
    for line in report.lines():
        print(line, flush=True)
    outcome = state.outcome or writeup.KILLED
    first = report.urls[0] if report.urls else state.run.log_issue_url
    actions_edge.append_summary(
        finish.headline_for_step_summary(
            writeup.summary_of(state), first, failed_parts=report.failed
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
        state = writeup.load_state(inputs.run_dir)
        assert state is not None
        state.outcome = outcome
        writeup.save_state(inputs.run_dir, state)
        _publish(inputs, inputs.run_dir)
    except Exception as failure:
        actions_edge.warning("Could not record the failure on the log issue", detail=str(failure))


# --------------------------------------------------------------------------- cleanup


def _record_cleanup(run_dir: Path, **fields: object) -> None:
    """Add to what the cleanup step must undo for this run (``RUN_DIR/cleanup.json``):
    ``agent_user``/``agent_uid`` (this run's user), ``base`` (its folder), ``mcp_pid``."""
    path = run_dir / CLEANUP_FILE
    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    data.update(fields)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data) + "\n", encoding="utf-8")
    tmp.replace(path)


def cleanup(
    run_dir: Path, *, gateway: Gateway | None = None, secrets: list[str] | None = None
) -> list[str]:
    """The ``if: always()`` step: whatever a crashed run left behind, and only what this
    run made (its MCP server, its own user's processes, folder and user); then the
    write-up if the run step did not finish it (SIGKILL, a lost runner). Returns what
    it did."""
    return [*_clean(run_dir), *finish_writeup(run_dir, gateway=gateway, secrets=secrets)]


def record_never_started(
    run: RunMetadata, settings: Settings, gateway: Gateway, *, secrets: list[str]
) -> tuple[writeup.WriteUpState, writeup.Report]:
    """The run step never started: put that on the log issue (an error comment and the
    bug label), once however often the clean-up step runs."""
    with tempfile.TemporaryDirectory(prefix="tusk-never-started-") as folder:
        state = writeup.WriteUpState(
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
        writeup.save_state(Path(folder), state)
        return writeup.write_up(Path(folder), gateway, secrets=secrets)


def finish_writeup(
    run_dir: Path, *, gateway: Gateway | None, secrets: list[str] | None = None
) -> list[str]:
    """Complete the write-up of the run in ``run_dir`` if it is not whole yet: a run killed
    before it knew its outcome is written up as cancelled. Returns what it did."""
    state = writeup.load_state(run_dir)
    if state is None:
        return []  # the run never got as far as its log issue: nothing to write up
    if state.complete:
        return [f"the write-up on {state.run.log_issue_url} is complete"]
    if gateway is None:
        return ["the write-up is incomplete, but no agent token was given to finish it"]
    killed = state.outcome is None
    state, report = writeup.write_up(run_dir, gateway, secrets=secrets or [])
    report_writeup(state, report)
    what = "recorded the run as cancelled (killed)" if killed else "completed the write-up"
    status = "" if report.complete else f"; still missing: {', '.join(report.failed)}"
    return [f"{what} on {state.run.log_issue_url}{status}"]


def _clean(run_dir: Path) -> list[str]:
    path = run_dir / CLEANUP_FILE
    if not path.is_file():
        return ["nothing recorded; nothing to clean"]
    data = json.loads(path.read_text(encoding="utf-8"))
    done = []
    pid = data.get("mcp_pid")
    if isinstance(pid, int) and _is_mcp_server(pid, run_dir):
        os.kill(pid, signal.SIGKILL)
        done.append(f"stopped the MCP server (pid {pid})")
    agent = _recorded_user(data)
    if agent is not None:
        killed = isolation.end_processes_of(agent)
        done.append(f"ended {len(killed)} leftover process(es) of {agent.name}")
    uid = data.get("fence_uid")
    if isinstance(uid, int) and fence.Fence(fence.tools()).remove(uid):
        done.append(f"removed the network fence of uid {uid}")
    pid, config = data.get("egress_pid"), data.get("egress_config")
    if isinstance(pid, int) and isinstance(config, str) and egress.is_egress_proxy(pid, config):
        os.kill(pid, signal.SIGKILL)
        done.append(f"stopped the egress proxy (pid {pid})")
    base = Path(data["base"]) if data.get("base") else None
    if base is not None and base.exists():
        isolation.remove_agent_traces(isolation.run_dirs(base), agent)
        done.append(f"removed {base}")
    if agent is not None and isolation.delete_run_user(agent):
        done.append(f"deleted the user {agent.name}")
    return done


def _recorded_user(data: dict[str, object]) -> Principal | None:
    """The run's user as recorded, if the system still knows it by that name and uid."""
    name, uid = data.get("agent_user"), data.get("agent_uid")
    if not isinstance(name, str) or not isinstance(uid, int):
        return None
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        return None
    if entry.pw_uid != uid or uid == 0:
        return None  # not the user this run made
    return Principal(name, uid, entry.pw_gid, Path(entry.pw_dir))


def _is_mcp_server(pid: int, run_dir: Path) -> bool:
    """Whether ``pid`` is this run's MCP server: its pid may be another's by now."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"mcp" in cmdline and b"serve" in cmdline and os.fsencode(run_dir) in cmdline
