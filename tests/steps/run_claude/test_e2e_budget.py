"""End to end (real Claude Code, the scripted model, the local GitHub): a mention sets its own
budget with its permission marker, and only ever lower than the configured one (C4)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.steps.run_claude.conftest import AGENT_TOKEN, E2E
from tusk.text.markers import first_marker

pytestmark = pytest.mark.e2e

GH = "mcp__github__"
CONFIRM = {
    "when_prompt_contains": "Self-check 2: confirm the work",
    "steps": [{"text": "Everything is pushed and the pull request exists."}],
}
HISTORY = {
    "when_prompt_contains": "Self-check 3: history",
    "steps": [
        {"tool_use": {"name": f"{GH}history", "input": {"text": "Looked at alice/widgets#1."}}},
        {"text": "History written."},
    ],
}


def bash(command: str) -> dict[str, Any]:
    return {"tool_use": {"name": "Bash", "input": {"command": command}}}


def test_a_marker_budget_of_half_a_dollar_stops_the_run_there(e2e: E2E) -> None:
    # Output at $450 per million tokens, input free: each request holds at least 1,024
    # output tokens ($0.4608) against the budget until its answer (20 tokens: $0.009) is
    # metered. Under the configured $5 the 30 steps would all run; under the mention's
    # $0.50 the sixth request finds no room for its worst case and the run stops.
    e2e.config = {
        "agent": {"linux_user": e2e.agent_user, "prices": {"opus": {"input": 0, "output": 450}}}
    }
    e2e.mention = "@tusk-bot [permissions: budget=0.5] keep checking"
    e2e.model.tolerate_failures()
    steps = [bash(f"echo step {i}") for i in range(30)]
    result = e2e.run({"steps": steps, "conversations": [CONFIRM, HISTORY]})
    assert result.outcome.kind == "budget", result.outcome
    assert result.outcome.detail.startswith("budget exceeded: $0.0450 of a $0.5000 budget")
    assert result.spend is not None and result.spend.budget_usd == 0.5
    assert result.spend.cost_usd <= 0.5 and len(e2e.model.journal()) == 5
    summary = e2e.log_comments()[0]
    assert "- model cost: $0.0450 of a $0.5000" in summary
    assert "$0.5000 of model spend (budget lowered by the mention's marker)" in summary
    # The progress comment holds the run's own budget against alice's cap, and says it ended.
    progress = [
        body for key, body in e2e.log_parts() if key is None and first_marker(body, "progress")
    ]
    assert [first_marker(body, "usage") for body in progress] == [
        {"cost_usd": 0.045, "budget_usd": 0.5, "done": True}
    ]
    status = e2e.status_comment("alice/widgets", 1)
    assert status is not None and "$0.0450 of $0.5000" in status


def test_a_marker_budget_above_the_configured_one_fails_closed(e2e: E2E) -> None:
    e2e.mention = "@tusk-bot [permissions: budget=500] spend freely"
    script = {
        "steps": [
            {"expect": {"prompt_contains": "budget=500 is above what agent.max_budget_usd"}},
            {
                "tool_use": {
                    "name": f"{GH}create_issue",
                    "input": {"repo": "alice/widgets", "title": "More", "body": "x"},
                }
            },
            {"expect": {"last_tool_result_contains": "PERMISSION_DENIED"}},
            {"text": "Refused, as the marker said."},
        ],
        "conversations": [CONFIRM, HISTORY],
    }
    result = e2e.run(script)
    assert result.outcome.kind == "completed", result.outcome
    assert result.spend is not None and result.spend.budget_usd == 5.0  # never the $500 asked
    summary = e2e.log_comments()[0]
    assert "the permission marker could not be read" in summary
    assert "budget=500 is above what agent.max_budget_usd allows (5)" in summary
    reader = e2e.github.gateway(AGENT_TOKEN)
    issues = reader.get("/repos/alice/widgets/issues", params={"state": "all"})
    assert [issue["title"] for issue in issues] == ["Typo in README"]  # nothing created


def test_two_runs_of_one_requester_in_flight_never_start_past_her_budget(e2e: E2E) -> None:
    """alice's cap is $8, a run's budget $5. Runs A, B and C of hers are claimed in that
    order while A is still working. C's check counts A and B at their whole budgets
    ($10): it never starts. B's counts A ($5): it starts with the $3 left, so A and B
    together can never spend past $8."""
    e2e.config = {
        "agent": {"linux_user": e2e.agent_user},
        "limits": {"requester_budget_usd": 8.0},
    }
    e2e.later_run("@tusk-bot task A", name="a", requester=True)  # in flight: holds $5
    b = e2e.later_run("@tusk-bot task B", name="b", requester=True)
    c = e2e.later_run("@tusk-bot task C", name="c", requester=True)

    refused = c.run({"steps": [{"text": "never asked"}]})
    assert refused.outcome.kind == "over_limit", refused.outcome
    assert "`limits.requester_budget_usd` is reached for requester alice: $10.00" in (
        refused.outcome.detail
    )
    assert e2e.model.journal() == []  # C started no agent
    assert c.log_issue()["state_reason"] == "not_planned"

    started = b.run({"steps": [{"text": "Done."}], "conversations": [CONFIRM, HISTORY]})
    assert started.outcome.kind == "completed", started.outcome
    assert started.spend is not None and started.spend.budget_usd == 3.0
    summary = b.log_comments()[0]
    assert (
        "$3.00 of model spend (budget lowered to what the requester has left of "
        "limits.requester_budget_usd)" in summary
    )
    progress = [
        first_marker(body, "usage")
        for key, body in b.log_parts()
        if key is None and first_marker(body, "progress")
    ]
    assert progress and progress[-1]["budget_usd"] == 3.0 and progress[-1]["done"] is True


def test_a_marker_turns_limit_is_claude_codes_max_turns_for_the_run(e2e: E2E) -> None:
    e2e.mention = "@tusk-bot [permissions: turns=2] look around"
    steps = [bash(f"echo step {i}") for i in range(10)]
    e2e.model.tolerate_failures()
    result = e2e.run({"steps": steps, "conversations": [CONFIRM, HISTORY]})
    assert result.outcome.kind == "max_turns", result.outcome
    main = [e for e in e2e.model.journal() if "Self-check" not in json.dumps(e["request"])]
    assert len(main) <= 3  # two turns (and no more) under the configured 60
    summary = e2e.log_comments()[0]
    assert "2 turns, 30 minutes, $5.00 of model spend (turns lowered by the mention's marker)" in (
        summary
    )
