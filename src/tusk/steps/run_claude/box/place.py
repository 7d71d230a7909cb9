"""Where and as whom the agent runs, decided and made before anything is started;
and all of it taken down again, whatever state the run ended in.

``place`` decides isolation and the network, makes the run's own user and its
folders (recorded at once in ``RUN_DIR/cleanup.json``, so that even a crash
leaves them to the cleanup step); ``settle_network`` puts the fence up around
the servers that were started; ``tear_down`` stops them, ends the agent's
processes, lifts its fence and removes its traces and its user.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tusk import actions_edge
from tusk.contracts.config import Settings
from tusk.steps.run_claude.box import cleanup, egress, fence, folders, launch, users
from tusk.steps.run_claude.box.folders import RunDirs
from tusk.steps.run_claude.box.network import NetworkPlan, open_by_need, plan_network
from tusk.steps.run_claude.box.principal import Principal
from tusk.steps.run_claude.inputs import JobInputs
from tusk.steps.run_claude.proxy.proxy import ModelProxy
from tusk.steps.run_claude.session.mcp_process import McpServer, port_of


@dataclass(frozen=True)
class Placement:
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
class Services:
    """What this run starts beside the agent, each stopped whatever happens."""

    fenced: fence.Fence
    server: McpServer | None = None
    proxy: ModelProxy | None = None
    egress_proxy: egress.EgressProxy | None = None

    def stop_servers(self) -> None:
        if self.server is not None:
            self.server.stop()
        if self.proxy is not None:
            self.proxy.stop()


def isolation_decision(inputs: JobInputs) -> users.Decision:
    decision = users.decide(in_actions=inputs.runner.isolation_required, euid=os.geteuid())
    if not decision.enabled:
        actions_edge.warning("User isolation is off", detail=decision.reason)
    return decision


def place(inputs: JobInputs, decision: users.Decision, network: NetworkPlan) -> Placement:
    """Make this run's user and its folders, as decided."""
    runner = users.runner_principal(inputs.runner.sudo_uid)
    _own_run_dir(inputs.run_dir, runner)
    agent = _create_agent(inputs, runner) if decision.enabled else None
    owner = agent or users.current_principal()
    dirs = _agent_dirs(inputs.run_dir, agent, owner)
    return Placement(decision.reason, network, runner, agent, owner, dirs, confinement(agent))


def _own_run_dir(run_dir: Path, runner: Principal) -> None:
    """The run folder: the runner's user's alone."""
    run_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(run_dir, 0o700)
    if runner.uid != os.getuid():
        os.chown(run_dir, runner.uid, runner.gid)


def _create_agent(inputs: JobInputs, runner: Principal) -> Principal:
    """This run's own user, recorded at once so that even a crash leaves it to cleanup."""
    agent = users.create_run_user(
        inputs.settings.agent.linux_user, inputs.runner.run_key, forbidden_uids=(runner.uid,)
    )
    cleanup.record(inputs.run_dir, agent_user=agent.name, agent_uid=agent.uid)
    return agent


def _agent_dirs(run_dir: Path, agent: Principal | None, owner: Principal) -> RunDirs:
    """The agent's home and workspace; the run's user goes again if they cannot be made."""
    base = folders.agent_base(agent) if agent else run_dir / "agent"
    try:
        dirs = folders.prepare_run_dirs(base, agent=owner)
    except Exception:
        if agent is not None:
            users.delete_run_user(agent)
        raise
    cleanup.record(run_dir, base=str(dirs.base))
    return dirs


def guarded_dirs(inputs: JobInputs, runner: Principal) -> list[Path]:
    """The runner's folders the agent's user must not read or write."""
    return [*inputs.runner.runner_dirs, runner.home, inputs.run_dir]


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


def settle_network(inputs: JobInputs, placed: Placement, services: Services) -> NetworkPlan:
    """Put the fence up where planned (or open where the settings allow it when it cannot
    be), then let the model proxy's guard follow what the network really is."""
    network = placed.network
    assert services.proxy is not None and services.server is not None  # started before
    if network.fenced and placed.agent is not None:
        network, services.egress_proxy = _put_up_fence(
            network,
            services.fenced,
            settings=inputs.settings,
            agent=placed.agent,
            run_dir=inputs.run_dir,
            runner=placed.runner,
            ports=(services.proxy.port, port_of(services.server.url)),
        )
    services.proxy.guard.fenced = network.fenced
    actions_edge.notice(f"Agent network: {network.status}")
    return network


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
            spawn=launch.spawn_as(runner if runner.uid != 0 else None),
        )
        cleanup.record(run_dir, egress_pid=started.pid, egress_config=str(started.config))
        cleanup.record(run_dir, fence_uid=agent.uid)  # before the first rule goes in
        fenced.apply(fence.FencePlan(uid=agent.uid, ports=(*ports, started.port)))
        return network, started
    except (egress.EgressError, fence.FenceError) as error:
        if started is not None:
            started.stop()
        return open_by_need(settings.agent, f"{error.title}. {error.hint}"), None


def tear_down(run_dir: Path, placed: Placement, services: Services) -> None:
    """Stop what the run started, end the agent's processes, lift its fence, remove its
    traces and its user: in this order, whatever state the run ended in."""
    services.stop_servers()
    agent = placed.agent
    if agent is not None:
        cleanup.end_processes_of(agent)
        services.fenced.remove(agent.uid)  # before the uid can go to another run's user
        cleanup.record(run_dir, fence_uid=None)  # the cleanup step must not touch it
    if services.egress_proxy is not None:
        services.egress_proxy.stop()
    cleanup.remove_agent_traces(placed.dirs, agent)
    if agent is not None:
        users.delete_run_user(agent)  # its unique name is never seen again


def confinement(agent: Principal | None) -> Mapping[str, str] | None:
    """The tools that put the agent in its own mount namespace, where the local sockets
    that reach the network (DNS over D-Bus, snapd...) are covered up; None without an
    agent user, or, said in the step log, where util-linux lacks them or the kernel
    refuses them."""
    if agent is None or os.geteuid() != 0:
        return None
    tools = launch.confinement_tools()
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
    problem = launch.confinement_problem(agent, tools=tools)
    if problem is not None:
        actions_edge.warning(
            "The agent runs without its own mount namespace",
            detail=f"it could not be made here ({problem}), {exposed} In a container, "
            "give the runner CAP_SYS_ADMIN or run it on the host.",
        )
        return None
    return tools
