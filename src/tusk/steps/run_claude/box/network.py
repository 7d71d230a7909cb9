"""How the agent's network is held for one run: fenced, or open and why. Pure.

Fenced is the default. ``agent.network: open`` opens it on purpose. When the
fence cannot be put up here (no root, no box), the run goes on open only
if ``agent.network_required: false`` says it may, and says so; otherwise it
stops before Claude Code starts. It is never opened silently.
"""

from __future__ import annotations

from dataclasses import dataclass

from tusk.contracts.config import OPEN_BY_SETTING, Agent, fenced_status
from tusk.errors import UserError


class NetworkFenceError(UserError):
    """The fence is required but cannot be put up."""


@dataclass(frozen=True)
class NetworkPlan:
    fenced: bool
    status: str  # the words the log issue and the step summary use
    hosts: tuple[str, ...] = ()
    warning: str | None = None  # said in the step log when the network is open by need


def plan_network(agent: Agent, *, unavailable: str | None) -> NetworkPlan:
    if agent.network == "open":
        return NetworkPlan(False, OPEN_BY_SETTING)
    hosts = tuple(agent.network.allow)
    if unavailable is None:
        return NetworkPlan(True, fenced_status(len(hosts)), hosts)
    return open_by_need(agent, unavailable)


def open_by_need(agent: Agent, reason: str) -> NetworkPlan:
    """The fence cannot be put up: open only where the settings allow it."""
    if agent.network_required:
        raise NetworkFenceError(
            f"The agent's network fence cannot be put up: {reason}",
            "The fence is the agent's box: run the step as root (or with passwordless sudo) "
            "on a machine with bubblewrap, socat and tinyproxy (apt-get install bubblewrap "
            "socat tinyproxy) whose kernel lets root make namespaces (in a container: "
            "CAP_SYS_ADMIN, or run on the host). To run without the fence anyway, set "
            "agent.network: open, or agent.network_required: false in tusk.yml.",
        )
    status = f"open (the fence cannot be put up: {reason}; agent.network_required: false)"
    return NetworkPlan(False, status, warning=status)
