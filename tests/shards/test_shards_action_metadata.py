"""receive-shard and merge-shards metadata: inputs through env, no template injection,
every output declared and documented, README tables in step with action.yml."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ACTIONS = [ROOT / "actions" / "receive-shard", ROOT / "actions" / "merge-shards"]
STAND_IN = ROOT / "sandbox" / "stand-ins" / "upload-artifact"


def load(folder: Path) -> dict:
    return yaml.safe_load((folder / "action.yml").read_text())


@pytest.mark.parametrize("folder", [*ACTIONS, STAND_IN], ids=lambda p: p.name)
def test_no_run_step_interpolates_expressions(folder):
    for step in load(folder)["runs"]["steps"]:
        assert "${{" not in step.get("run", ""), step.get("name") or step.get("id")


@pytest.mark.parametrize("folder", [*ACTIONS, STAND_IN], ids=lambda p: p.name)
def test_every_input_reaches_a_step_through_env_or_with(folder):
    action = load(folder)
    mapped = " ".join(
        str(value)
        for step in action["runs"]["steps"]
        for value in [*(step.get("env") or {}).values(), *(step.get("with") or {}).values()]
    )
    for name in action["inputs"]:
        assert f"inputs.{name} }}}}" in mapped, f"input {name} is never mapped"


@pytest.mark.parametrize("folder", ACTIONS, ids=lambda p: p.name)
def test_every_output_is_wired_to_a_step_that_exists(folder):
    action = load(folder)
    step_ids = {step.get("id") for step in action["runs"]["steps"]}
    for name, output in action["outputs"].items():
        referenced = set(re.findall(r"steps\.([a-z-]+)\.outputs", output["value"]))
        assert referenced and referenced <= step_ids, name


@pytest.mark.parametrize("folder", ACTIONS, ids=lambda p: p.name)
def test_readme_tables_list_exactly_the_inputs_and_outputs(folder):
    action = load(folder)
    readme = (folder / "README.md").read_text()
    inputs_part = readme.split("## Inputs", 1)[1].split("## Outputs", 1)[0]
    outputs_part = readme.split("## Outputs", 1)[1].split("\n## ", 1)[0]
    rows = re.compile(r"^\| `([a-z-]+)` \|", re.M)
    assert rows.findall(inputs_part) == list(action["inputs"])
    assert rows.findall(outputs_part) == list(action["outputs"])


@pytest.mark.parametrize("folder", ACTIONS, ids=lambda p: p.name)
def test_actions_run_the_tusk_command_of_their_own_step(folder):
    runs = " ".join(step.get("run", "") for step in load(folder)["runs"]["steps"])
    assert f"tusk {folder.name} " in runs
    assert '"$GITHUB_ACTION_PATH/../.."' in runs


def test_receive_shard_stores_through_upload_artifact_v4():
    steps = load(ACTIONS[0])["runs"]["steps"]
    uploads = [step for step in steps if step.get("uses", "").startswith("actions/upload-artifact")]
    assert [step["uses"] for step in uploads] == ["actions/upload-artifact@v4"]
    assert "artifact-name" in uploads[0]["with"]["name"]
