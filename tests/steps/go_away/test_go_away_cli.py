"""``tusk go-away`` as the action runs it: payload from the event file, settings from
tusk.yml, the token from the environment; and the action's metadata."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from go_away_world import BOT, CONTROL, request, scenario

from tusk.cli.main import main as tusk_main

ACTION_DIR = Path(__file__).resolve().parents[3] / "actions" / "go-away"
REUSABLE = Path(__file__).resolve().parents[3] / ".github" / "workflows" / "tusk-go-away.yml"


@pytest.fixture
def cli_env(local_github: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    local_github.load(scenario())
    config = tmp_path / "tusk.yml"
    config.write_text(
        yaml.safe_dump(
            {
                "bot": BOT,
                "control_repo": CONTROL,
                "allowed_users": ["alice"],
                "go_away": {"delete_pause_seconds": 0, "reaction": "eyes"},
            }
        )
    )
    for name in ("GITHUB_ACTIONS", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "TUSK_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TUSK_AGENT_TOKEN", "agent")
    monkeypatch.setenv("TUSK_GITHUB_API_URL", local_github.url)
    return config


def event_file(tmp_path: Path, action: str = "tusk-go-away", **overrides: Any) -> Path:
    payload = json.loads(request("bob", **overrides).model_dump_json())
    path = tmp_path / "event.json"
    path.write_text(json.dumps({"action": action, "client_payload": payload}))
    return path


def test_dispatch_event_runs_the_whole_go_away(
    local_github: Any, cli_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event_file(tmp_path)))
    assert tusk_main(["go-away", "--config", str(cli_env)]) == 0
    widgets = local_github.state()["repos"]["alice/widgets"]
    reactions = [r["content"] for c in widgets["issues"]["1"]["comments"] for r in c["reactions"]]
    assert reactions == ["eyes"]  # from tusk.yml
    assert f"{BOT}/widgets" not in local_github.state()["repos"]


def test_reaction_flag_overrides_the_config(
    local_github: Any, cli_env: Path, tmp_path: Path
) -> None:
    argv = ["go-away", "--config", str(cli_env), "--payload", str(event_file(tmp_path))]
    assert tusk_main([*argv, "--reaction", "none"]) == 0
    widgets = local_github.state()["repos"]["alice/widgets"]
    assert all(not c["reactions"] for c in widgets["issues"]["1"]["comments"])


def test_other_dispatches_are_refused_before_touching_github(
    local_github: Any, cli_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    payload = event_file(tmp_path, action="tusk-shard")
    assert tusk_main(["go-away", "--config", str(cli_env), "--payload", str(payload)]) == 1
    assert "not 'tusk-go-away'" in capsys.readouterr().err
    assert local_github.journal() == []


def test_the_bot_cannot_send_itself_away(
    local_github: Any, cli_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    payload = tmp_path / "payload.json"
    payload.write_text(request(BOT).model_dump_json())
    assert tusk_main(["go-away", "--config", str(cli_env), "--payload", str(payload)]) == 1
    assert "cannot send itself away" in capsys.readouterr().err
    assert local_github.journal() == []


def test_malformed_payload_names_every_problem(
    cli_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps({"jobid": "x", "actor": "bob", "surprise": 1}))
    assert tusk_main(["go-away", "--config", str(cli_env), "--payload", str(payload)]) == 1
    err = capsys.readouterr().err
    assert "surprise" in err and "repo" in err and "comment_url" in err


# --------------------------------------------------------------------------- metadata


def action() -> dict[str, Any]:
    return yaml.safe_load((ACTION_DIR / "action.yml").read_text())


def test_no_expression_inside_any_run_script() -> None:
    for step in action()["runs"]["steps"]:
        assert "${{" not in step.get("run", ""), step.get("name")


def test_every_input_reaches_the_step_through_env() -> None:
    steps = action()["runs"]["steps"]
    mapped = {
        match
        for step in steps
        for value in (step.get("env") or {}).values()
        for match in re.findall(r"inputs\.([a-z-]+)", str(value))
    }
    assert mapped == set(action()["inputs"])


def test_every_output_is_declared_and_wired_to_the_step() -> None:
    outputs = action()["outputs"]
    assert set(outputs) == {
        "handled",
        "log-issue-url",
        "blocked-repos",
        "blocked-users",
        "removed",
        "failures",
    }
    for name, spec in outputs.items():
        assert spec["value"] == f"${{{{ steps.go-away.outputs.{name} }}}}"


def test_readme_tables_list_exactly_the_inputs_and_outputs() -> None:
    readme = (ACTION_DIR / "README.md").read_text()
    inputs_part, outputs_part = readme.split("## Inputs", 1)[1].split("## Outputs", 1)
    listed_inputs = re.findall(r"^\| `([a-z-]+)` \|", inputs_part, re.M)
    listed_outputs = re.findall(r"^\| `([a-z-]+)` \|", outputs_part.split("##", 1)[0], re.M)
    assert listed_inputs == list(action()["inputs"])
    assert listed_outputs == list(action()["outputs"])


def test_workflow_jobs_are_guarded_against_other_dispatches() -> None:
    from tusk.cli.init import TuskRef, caller_files

    # act ignores ``types:`` (reference/act.md), so each job checks the event itself: the
    # caller runs for exactly the dispatches it listens to, each reusable job for its own.
    caller = yaml.safe_load(
        caller_files(TuskRef.parse("acme/tusk@v1"))[".github/workflows/go-away.yml"]
    )
    types = caller[True]["repository_dispatch"]["types"]  # YAML reads ``on`` as True
    assert "tusk-go-away" in types
    expected = " || ".join(f"github.event.action == '{kind}'" for kind in types)
    assert [job["if"] for job in caller["jobs"].values()] == [expected]
    reusable = yaml.safe_load(REUSABLE.read_text())
    guards = [job["if"] for job in reusable["jobs"].values()]
    assert sorted(guards) == sorted(f"github.event.action == '{kind}'" for kind in types)
