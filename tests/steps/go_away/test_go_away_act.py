"""The go-away workflow, offline under act: the tusk-go-away dispatch runs the caller,
the caller the reusable workflow, and that the composite action against the local GitHub."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from go_away_world import BOT, CONTROL, request, scenario

from tusk.sandbox.act_runner import ControlRepo

pytestmark = [pytest.mark.act, pytest.mark.slow]


def test_go_away_workflow_runs_offline_under_act(local_github: Any, tmp_path: Path) -> None:
    local_github.load(scenario())
    control = ControlRepo(tmp_path / "control", repo=CONTROL)
    (control.root / "tusk.yml").write_text(
        yaml.safe_dump(
            {
                "bot": BOT,
                "control_repo": CONTROL,
                "allowed_users": ["alice"],
                "go_away": {"delete_pause_seconds": 0},
            }
        )
    )
    payload = json.loads(request("bob").model_dump_json())

    result = control.run(
        "repository_dispatch",
        {"action": "tusk-go-away", "client_payload": payload},
        workflow="go-away.yml",
        api_url=local_github.url,
        secrets={"TUSK_AGENT_TOKEN": "agent"},
    )

    assert result.ok, result.stdout[-4000:] + result.stderr[-2000:]
    state = local_github.state()["repos"]
    assert f"{BOT}/widgets" not in state
    comments = {c["id"] for c in state["alice/widgets"]["issues"]["1"]["comments"]}
    assert comments == {501, 503, 504}
    logs = [i for i in state[CONTROL]["issues"].values() if "go away" in i["title"]]
    assert [(i["state"], i["state_reason"]) for i in logs] == [("closed", "not_planned")]


def test_other_dispatches_skip_the_go_away_job(local_github: Any, tmp_path: Path) -> None:
    local_github.load(scenario())
    control = ControlRepo(tmp_path / "control", repo=CONTROL)
    result = control.run(
        "repository_dispatch",
        {"action": "tusk-shard", "client_payload": {}},
        workflow="go-away.yml",
        api_url=local_github.url,
        secrets={"TUSK_AGENT_TOKEN": "agent"},
    )
    assert result.ok, result.stdout[-4000:]
    assert local_github.journal() == []
