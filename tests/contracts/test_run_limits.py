"""The run's own limits: the lowest of tusk.yml, the mention's marker and what the
requester has left (C4, C7). Pure."""

from __future__ import annotations

from tusk.contracts.config import Settings
from tusk.contracts.models import PermissionConfig
from tusk.contracts.run_limits import run_limits, run_settings

SETTINGS = Settings(bot="tusk-bot", control_repo="alice/control", allowed_users=("alice",))


def test_no_marker_and_no_cap_keep_the_configured_limits() -> None:
    limits = run_limits(SETTINGS, PermissionConfig())
    assert (limits.budget_usd, limits.max_turns, limits.run_minutes) == (5.0, 60, 30.0)
    assert limits.summary() == "60 turns, 30 minutes, $5.00 of model spend"


def test_the_marker_and_the_requesters_remainder_only_ever_lower_them() -> None:
    asked = PermissionConfig(budget_usd=2.0, max_turns=10, run_minutes=5.0)
    limits = run_limits(SETTINGS, asked, requester_left_usd=1.5)
    assert (limits.budget_usd, limits.max_turns, limits.run_minutes) == (1.5, 10, 5.0)
    assert "budget lowered to what the requester has left" in limits.summary()
    assert "turns lowered by the mention's marker" in limits.summary()
    # A context document asking for more than tusk.yml (a hand-made dispatch) gets tusk.yml's.
    greedy = PermissionConfig(budget_usd=500.0, max_turns=1000, run_minutes=600.0)
    assert run_limits(SETTINGS, greedy, requester_left_usd=99.0).summary() == (
        "60 turns, 30 minutes, $5.00 of model spend"
    )


def test_the_runs_settings_carry_its_own_limits_and_nothing_else_changes() -> None:
    limits = run_limits(SETTINGS, PermissionConfig(budget_usd=0.5, max_turns=3))
    settled = run_settings(SETTINGS, limits)
    assert settled.agent.max_budget_usd == 0.5 and settled.limits.max_turns == 3
    assert settled.limits.run_minutes == 30.0
    assert settled.model_dump(exclude={"agent", "limits"}) == SETTINGS.model_dump(
        exclude={"agent", "limits"}
    )
    assert SETTINGS.agent.max_budget_usd == 5.0  # the configured settings are untouched
