"""Where and as whom the agent runs, decided and made before anything is started;
and all of it taken down again, whatever state the run ended in.

``place`` decides isolation, the box and the network, makes the run's own user
and its folders (recorded at once in ``RUN_DIR/cleanup.json``, so that even a
crash leaves them to the cleanup step); ``settle_network`` opens the box's roads
to the servers that were started (``bridge``) and starts the egress proxy;
``tear_down`` stops them, ends the agent's processes and removes its traces, its
keys and its user.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from tusk import actions_edge
from tusk.contracts.config import Settings
from tusk.steps.run_claude.box import bwrap, cleanup, egress, folders, launch, tools_shell, users
from tusk.steps.run_claude.box.bridge import Bridges
from tusk.steps.run_claude.box.folders import RunDirs
from tusk.steps.run_claude.box.network import NetworkPlan, open_by_need, plan_network
from tusk.steps.run_claude.box.principal import Principal
from tusk.steps.run_claude.inputs import JobInputs
from tusk.steps.run_claude.proxy.proxy import ModelProxy
from tusk.steps.run_claude.session.mcp_process import McpServer, port_of

# In the agent's own folder (a short path: a Unix socket's may not pass 107 bytes,
# and a runner's temp folder can be deep), root's, the agent's group may pass.
SOCKET_DIR = "sock"
NOBODY = Principal("nobody", 65534, 65534, Path("/nonexistent"))  # who the box is tried as
WITHOUT_BOX = (
    "no network, IPC, PID, UTS or mount namespace of its own: the agent can reach "
    "the host's sockets (abstract ones too) and every loopback port, see the host's "
    "processes and open those of its own uid, and share System V IPC with the host"
)


@dataclass(frozen=True)
class Placement:
    """Where and as whom the agent runs: decided and made before anything is started."""

    isolation_note: str
    network: NetworkPlan
    runner: Principal
    agent: Principal | None  # this run's own user; None without isolation
    owner: Principal  # who owns the agent's folders: the agent, or this process's user
    dirs: RunDirs
    box: bwrap.Box | None = None  # one decision for Claude Code and for git as the agent


@dataclass
class Services:
    """What this run starts beside the agent, each stopped whatever happens."""

    server: McpServer | None = None
    proxy: ModelProxy | None = None
    egress_proxy: egress.EgressProxy | None = None
    bridges: Bridges | None = None

    def stop_servers(self) -> None:
        if self.bridges is not None:
            self.bridges.stop()
        if self.server is not None:
            self.server.stop()
        if self.proxy is not None:
            self.proxy.stop()


@dataclass(frozen=True)
class Endpoints:
    """The servers' URLs as the agent reaches them: inside its box, or on the host."""

    model: str
    mcp: str
    egress: str | None


def isolation_decision(inputs: JobInputs) -> users.Decision:
    decision = users.decide(in_actions=inputs.runner.isolation_required, euid=os.geteuid())
    if not decision.enabled:
        actions_edge.warning("User isolation is off", detail=decision.reason)
    return decision


def box_decision(*, isolated: bool, run_dir: Path) -> tuple[bwrap.Tools | None, str | None]:
    """The box's tools, or why there can be no box here (tried once, around ``true``)."""
    if not isolated:
        return None, "user isolation is off, so there is no agent user to box"
    tools = bwrap.tools()
    if tools is None:
        missing = " ".join(bwrap.missing_tools()) or "bubblewrap"
        return None, f"{missing} is not installed (apt-get install {missing})"
    problem = bwrap.problem(NOBODY, run_dir, tools=tools)
    if problem is not None:
        return None, f"the kernel refused the box's namespaces ({problem})"
    return tools, None


def decide_network(settings: Settings, *, box_off: str | None) -> NetworkPlan:
    """Fenced, or open and why; raises when the fence is required and cannot be made.
    The box is the fence: without it the agent's network is the host's."""
    reason = box_off
    agent = settings.agent
    hosts = agent.network.allow if agent.network != "open" else ()
    if reason is None and hosts and egress.binary() is None:
        reason = "tinyproxy is not installed (apt-get install tinyproxy)"
    plan = plan_network(agent, unavailable=reason)
    if plan.warning:
        actions_edge.warning("The agent's network is not fenced", detail=plan.warning)
    return plan


def isolation_note(
    decision: users.Decision, box_off: str | None, tools_together: str | None = None
) -> str:
    """The run's isolation line: the user, the box, and whether the tools have
    namespaces of their own (``tools_together``: why not)."""
    if not decision.enabled:
        return decision.reason
    if box_off is not None:
        return f"{decision.reason}; its box is OFF ({box_off}): {WITHOUT_BOX}"
    boxed = f"{decision.reason}, in a box of its own (network, IPC, PID, UTS and mount namespaces)"
    if tools_together is None:
        return f"{boxed}, its tools in user and PID namespaces of their own"
    return f"{boxed}; its tools share its PID namespace ({tools_together})"


def _tools_shell(
    tools: bwrap.Tools, run_dir: Path, dirs: RunDirs
) -> tuple[Path | None, str | None]:
    """The tools' own shell (``tools_shell``), or why the tools share Claude Code's PID
    namespace here."""
    unshare = tools_shell.unshare_binary()
    if unshare is None:
        return None, "unshare is not installed (apt-get install util-linux)"
    problem = tools_shell.problem(NOBODY, run_dir, tools=tools, unshare=unshare)
    if problem is not None:
        return None, f"the kernel refused the agent a user namespace: {problem}"
    return tools_shell.place(dirs.bin, unshare), None


def place(inputs: JobInputs, decision: users.Decision) -> Placement:
    """Make this run's user and its folders, as decided; the box and network with them."""
    run_dir = inputs.run_dir
    runner = users.runner_principal(inputs.runner.sudo_uid)
    _own_run_dir(run_dir, runner)
    tools, box_off = box_decision(isolated=decision.enabled, run_dir=run_dir)
    if decision.enabled and box_off is not None:
        actions_edge.warning("The agent runs without its box", detail=f"{box_off}: {WITHOUT_BOX}")
    network = decide_network(inputs.settings, box_off=box_off)
    agent = _create_agent(inputs, runner) if decision.enabled else None
    owner = agent or users.current_principal()
    dirs = _agent_dirs(run_dir, agent, owner)
    box, tools_together = None, None
    if tools is not None and agent is not None:
        shell, tools_together = _tools_shell(tools, run_dir, dirs)
        box = bwrap.Box(
            tools,
            agent,
            dirs.base,
            dirs.base / SOCKET_DIR,
            shield_gid=bwrap.shield_group(),
            tools_shell=shell,
        )
    cleanup.record(run_dir, boxed=box is not None)  # without it, cleanup scans the host
    note = isolation_note(decision, box_off, tools_together)
    return Placement(note, network, runner, agent, owner, dirs, box)


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


def settle_network(inputs: JobInputs, placed: Placement, services: Services) -> NetworkPlan:
    """Open the box's roads to its servers where it is fenced (the egress proxy too,
    when any host is allowed), then let the model proxy's guard follow what the
    network really is. An egress proxy that will not start is the fence not being
    possible after all: open only where the settings allow it."""
    network = placed.network
    assert services.proxy is not None and services.server is not None  # started before
    if network.fenced and placed.box is not None:
        ports = {"model": services.proxy.port, "mcp": port_of(services.server.url)}
        try:
            if network.hosts:
                services.egress_proxy = _start_egress(network, inputs.run_dir, placed.runner)
                ports["egress"] = services.egress_proxy.port
        except egress.EgressError as error:
            # The box stays (IPC, PID, mount); its network is the host's.
            network = open_by_need(inputs.settings.agent, f"{error.title}. {error.hint}")
        else:
            socket_dir = placed.box.socket_dir
            socket_dir.mkdir(mode=0o710, exist_ok=True)
            os.chown(socket_dir, 0, placed.box.user.gid)
            os.chmod(socket_dir, 0o710)  # this run's agent may pass, no other user
            services.bridges = Bridges(socket_dir, ports, group=placed.box.user.gid)
            services.bridges.start()
    services.proxy.guard.fenced = network.fenced
    actions_edge.notice(f"Agent network: {network.status}")
    return network


def _start_egress(network: NetworkPlan, run_dir: Path, runner: Principal) -> egress.EgressProxy:
    started = egress.start(
        network.hosts,
        run_dir=run_dir,
        spawn=launch.spawn_as(runner if runner.uid != 0 else None),
    )
    cleanup.record(run_dir, egress_pid=started.pid, egress_config=str(started.config))
    return started


def endpoints(placed: Placement, services: Services, network: NetworkPlan) -> Endpoints:
    """Where the agent finds its servers: the box's own loopback ports when it has a
    network of its own, else the servers' host ports."""
    assert services.proxy is not None and services.server is not None
    egress_url = services.egress_proxy.url if services.egress_proxy is not None else None
    if placed.box is None or not network.fenced:
        return Endpoints(services.proxy.url, services.server.url, egress_url)
    inside = bwrap.BOX_PORTS
    return Endpoints(
        model=f"http://127.0.0.1:{inside['model']}",
        mcp=_with_port(services.server.url, inside["mcp"]),
        egress=f"http://127.0.0.1:{inside['egress']}" if egress_url else None,
    )


def bridged(services: Services) -> tuple[str, ...]:
    """The servers the box has a road to."""
    return tuple(services.bridges.ports) if services.bridges is not None else ()


def _with_port(url: str, port: int) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, f"127.0.0.1:{port}", parts.path, parts.query, ""))


def tear_down(run_dir: Path, placed: Placement, services: Services) -> None:
    """Stop what the run started, end the agent's processes, remove its traces, its keys
    and its user: in this order, whatever state the run ended in."""
    services.stop_servers()
    agent = placed.agent
    if agent is not None:
        cleanup.end_processes_of(agent)
    if services.egress_proxy is not None:
        services.egress_proxy.stop()
    cleanup.remove_agent_traces(placed.dirs, agent, scan_host=placed.box is None)
    if agent is not None:
        users.delete_run_user(agent)  # its unique name is never seen again
