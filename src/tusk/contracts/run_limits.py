"""The run's own limits (MISSION C4): budget, turns and minutes, as low as anything asks.

Three things set them, and the lowest wins: ``tusk.yml`` (``agent.max_budget_usd``,
``limits.max_turns``, ``limits.run_minutes``), the mention's permission marker
(``budget=``, ``turns=``, ``minutes=``, already checked to be no higher by
``tusk.poller.permissions``), and for the budget what the requester has left of
``limits.requester_budget_usd`` when the run starts (``tusk.contracts.limits``).
The minimum is taken again here, so a context document carrying a higher value
than the configuration (a hand-made dispatch) still gets the configured one.
Pure: the run's settings are the configured settings with these three lowered,
so every part downstream (the meter, the session, the write-up) reads one value.
"""

from __future__ import annotations

from dataclasses import dataclass

from tusk.contracts.config import Settings
from tusk.contracts.models import PermissionConfig
from tusk.contracts.pricing import format_usd


@dataclass(frozen=True)
class RunLimits:
    """The limits one run gets, and in words what lowered them."""

    budget_usd: float
    max_turns: int
    run_minutes: float
    lowered_by: tuple[str, ...] = ()

    def summary(self) -> str:
        """The run's budgets, in the words the log issue, summary and status use."""
        text = (
            f"{self.max_turns} turns, {self.run_minutes:g} minutes, "
            f"{format_usd(self.budget_usd)} of model spend"
        )
        return text + (f" ({'; '.join(self.lowered_by)})" if self.lowered_by else "")


def run_limits(
    settings: Settings, config: PermissionConfig, *, requester_left_usd: float | None = None
) -> RunLimits:
    """The lowest of the configured limits, the marker's and the requester's remainder."""
    agent, limits = settings.agent, settings.limits
    why: list[str] = []
    budget = agent.max_budget_usd
    if config.budget_usd is not None and config.budget_usd < budget:
        budget = config.budget_usd
        why.append("budget lowered by the mention's marker")
    if requester_left_usd is not None and requester_left_usd < budget:
        budget = max(requester_left_usd, 0.0)
        why.append("budget lowered to what the requester has left of limits.requester_budget_usd")
    turns = limits.max_turns
    if config.max_turns is not None and config.max_turns < turns:
        turns = config.max_turns
        why.append("turns lowered by the mention's marker")
    minutes = limits.run_minutes
    if config.run_minutes is not None and config.run_minutes < minutes:
        minutes = config.run_minutes
        why.append("minutes lowered by the mention's marker")
    return RunLimits(budget, turns, minutes, tuple(why))


def run_settings(settings: Settings, limits: RunLimits) -> Settings:
    """``settings`` with the run's own limits in place of the configured ones."""
    return settings.model_copy(
        update={
            "agent": settings.agent.model_copy(update={"max_budget_usd": limits.budget_usd}),
            "limits": settings.limits.model_copy(
                update={"max_turns": limits.max_turns, "run_minutes": limits.run_minutes}
            ),
        }
    )
