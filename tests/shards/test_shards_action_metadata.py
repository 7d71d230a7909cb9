"""receive-shard and merge-shards metadata: inputs through env, no template injection,
every output declared and documented, README tables in step with action.yml."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ACTIONS = [ROOT / "actions" / "receive-shard", ROOT / "actions" / "merge-shards"]
STAND_IN = ROOT / "src" / "tusk" / "sandbox" / "stand-ins" / "upload-artifact"


def load(folder: Path) -> dict:
    return yaml.safe_load((folder / "action.yml").read_text())


@pytest.mark.parametrize("folder", ACTIONS, ids=lambda p: p.name)
def test_actions_run_the_tusk_command_of_their_own_step(folder):
    runs = " ".join(step.get("run", "") for step in load(folder)["runs"]["steps"])
    assert re.search(rf"\btusk {folder.name}(\s|$)", runs)
    assert 'bash "$GITHUB_ACTION_PATH/../install.sh"' in runs


def test_receive_shard_stores_through_upload_artifact_v4():
    steps = load(ACTIONS[0])["runs"]["steps"]
    uploads = [step for step in steps if step.get("uses", "").startswith("actions/upload-artifact")]
    # v4.6.2, pinned by commit.
    assert [step["uses"] for step in uploads] == [
        "actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02"
    ]
    assert "artifact-name" in uploads[0]["with"]["name"]
