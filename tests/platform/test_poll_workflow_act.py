"""The poll workflows: a schedule every 5 minutes plus manual runs, least rights,
tokens only through env:, and a real run under act that dispatches the mention."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from tusk.sandbox.act_runner import ControlRepo
from tusk.sandbox.scenario import read_scenario_file

ROOT = Path(__file__).resolve().parents[2]
CONTROL = "alice/tusk-control"


def load(name: str) -> dict[str, Any]:
    return yaml.safe_load((ROOT / "workflows" / name).read_text(encoding="utf-8"))


def test_caller_polls_every_five_minutes_and_on_demand() -> None:
    caller = load("poll.yml")
    triggers = caller[True]  # YAML 1.1 reads the key `on` as True
    assert triggers["schedule"] == [{"cron": "*/5 * * * *"}]
    assert "workflow_dispatch" in triggers
    assert caller["permissions"] == {"contents": "read"}
    (job,) = caller["jobs"].values()
    assert job["uses"] == "./.github/workflows/tusk-poll.yml"


def test_reusable_poll_holds_tokens_only_in_the_poll_steps_env() -> None:
    reusable = load("tusk-poll.yml")
    assert set(reusable[True]["workflow_call"]["secrets"]) == {
        "TUSK_BOT_TOKEN",
        "TUSK_DISPATCH_TOKEN",
    }
    assert reusable["permissions"] == {"contents": "read"}
    steps = reusable["jobs"]["poll"]["steps"]
    with_secrets = [s for s in steps if "secrets." in str(s)]
    assert len(with_secrets) == 1
    assert "secrets." not in with_secrets[0]["run"]
    assert with_secrets[0]["run"] == "tusk poll --once"


@pytest.mark.act
def test_poll_workflow_dispatches_the_mention_under_act(local_github: Any, tmp_path: Path) -> None:
    local_github.load(read_scenario_file(ROOT / "sandbox" / "scenarios" / "demo.yml"))
    config = {"bot": "tusk-bot", "control_repo": CONTROL, "allowed_users": ["alice"]}
    control = ControlRepo(tmp_path / "control", repo=CONTROL, config_text=yaml.safe_dump(config))

    result = control.run(
        "workflow_dispatch",
        {"inputs": {}},
        workflow="poll.yml",
        api_url=local_github.url,
        secrets={"TUSK_BOT_TOKEN": "bot-read", "TUSK_DISPATCH_TOKEN": "dispatch"},
    )

    assert result.ok, result.stdout[-4000:] + result.stderr[-2000:]
    dispatches = local_github.dispatches()
    assert [(d["repo"], d["event_type"], d["token"]) for d in dispatches] == [
        (CONTROL, "tusk-shard", "dispatch")
    ]
    assert dispatches[0]["client_payload"]["total_shards"] == 1
    # The thread is marked read once its trigger was dispatched.
    unread = local_github.gateway("bot-read").get("/notifications")
    assert unread == []
