"""workflows/poll.yml: scheduled, dispatchable and callable; least rights; secrets only via env."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

WORKFLOWS = Path(__file__).parents[2] / "workflows"


def load(name: str) -> dict[str, Any]:
    data = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as True
    return data


def test_poll_runs_every_five_minutes_on_demand_and_when_called() -> None:
    workflow = load("poll.yml")
    triggers = workflow["on"]
    assert triggers["schedule"] == [{"cron": "*/5 * * * *"}]
    assert "workflow_dispatch" in triggers
    assert set(triggers["workflow_call"]["secrets"]) == {"TUSK_BOT_TOKEN", "TUSK_DISPATCH_TOKEN"}


def test_poll_asks_for_read_only_contents_and_nothing_else() -> None:
    workflow = load("poll.yml")
    assert workflow["permissions"] == {"contents": "read"}
    for job in workflow["jobs"].values():
        assert job.get("permissions", {"contents": "read"}) == {"contents": "read"}


def test_tokens_reach_the_poller_through_env_never_inline() -> None:
    (job,) = load("poll.yml")["jobs"].values()
    runs = [step for step in job["steps"] if "run" in step]
    assert all("${{" not in step["run"] for step in runs)
    (poll,) = [step for step in runs if "tusk poll" in step["run"]]
    assert poll["run"].strip() == "tusk poll --once"
    assert poll["env"]["TUSK_BOT_TOKEN"] == "${{ secrets.TUSK_BOT_TOKEN }}"
    assert poll["env"]["TUSK_DISPATCH_TOKEN"] == "${{ secrets.TUSK_DISPATCH_TOKEN }}"
    assert "TUSK_GITHUB_API_URL" in poll["env"]
    checkouts = [
        step for step in job["steps"] if str(step.get("uses", "")).startswith("actions/checkout")
    ]
    assert checkouts and all(step["with"]["persist-credentials"] is False for step in checkouts)


def test_caller_example_calls_the_reusable_workflow_with_both_secrets() -> None:
    caller = load("poll-caller.yml")
    assert caller["on"]["schedule"] == [{"cron": "*/5 * * * *"}]
    (job,) = caller["jobs"].values()
    assert job["uses"].endswith("/.github/workflows/poll.yml@v1")
    assert set(job["secrets"]) == {"TUSK_BOT_TOKEN", "TUSK_DISPATCH_TOKEN"}
