"""Every composite action: complete metadata, inputs only through env:, no
expression inside run: (template injection), README tables that match."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ACTIONS = sorted(path.parent.name for path in (ROOT / "actions").glob("*/action.yml"))
STAND_INS = sorted((ROOT / "src" / "tusk" / "sandbox" / "stand-ins").rglob("action.yml"))
EXPECTED = [
    "apply",
    "build-context",
    "go-away",
    "merge-shards",
    "receive-shard",
    "run-claude",
    "stop",
    "undo",
]


def load(action: str) -> dict[str, Any]:
    return yaml.safe_load((ROOT / "actions" / action / "action.yml").read_text(encoding="utf-8"))


def readme_names(action: str, section: str) -> list[str]:
    text = (ROOT / "actions" / action / "README.md").read_text(encoding="utf-8")
    match = re.search(rf"^## {section}\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    assert match, f"{action}/README.md has no '## {section}' section"
    return re.findall(r"^\| `([A-Za-z0-9_-]+)` \|", match.group(1), flags=re.M)


def test_all_six_actions_exist() -> None:
    assert ACTIONS == EXPECTED


@pytest.mark.parametrize("action", ACTIONS)
def test_metadata_is_complete(action: str) -> None:
    meta = load(action)
    assert meta.get("name") and meta.get("description"), action
    assert {"icon", "color"} <= set(meta.get("branding") or {}), f"{action}: branding"
    assert meta["runs"]["using"] == "composite"
    for name, spec in (meta.get("inputs") or {}).items():
        assert spec.get("description"), f"{action} input {name}: description"
        assert spec.get("required") is True or "default" in spec, (
            f"{action} input {name}: say required: true or give a default"
        )
    step_ids = {step.get("id") for step in meta["runs"]["steps"]}
    for name, spec in (meta.get("outputs") or {}).items():
        assert spec.get("description"), f"{action} output {name}: description"
        referenced = set(re.findall(r"steps\.([A-Za-z0-9_-]+)\.outputs", str(spec.get("value"))))
        assert referenced and referenced <= step_ids, (
            f"{action} output {name} must be wired to the outputs of steps that exist"
        )


@pytest.mark.parametrize("action", ACTIONS)
def test_no_expression_inside_run_against_template_injection(action: str) -> None:
    for index, step in enumerate(load(action)["runs"]["steps"]):
        assert "${{" not in str(step.get("run", "")), f"{action} step {index}: ${{{{ }}}} in run:"


@pytest.mark.parametrize("path", STAND_INS, ids=lambda p: p.parent.name)
def test_local_stand_ins_follow_the_same_rules(path: Path) -> None:
    meta = yaml.safe_load(path.read_text(encoding="utf-8"))
    mapped = set()
    for step in meta["runs"]["steps"]:
        assert "${{" not in str(step.get("run", "")), f"{path.parent.name}: ${{{{ }}}} in run:"
        for value in (step.get("env") or {}).values():
            mapped.update(re.findall(r"inputs\.([A-Za-z0-9_-]+)", str(value)))
    assert set(meta.get("inputs") or {}) <= mapped


@pytest.mark.parametrize("action", ACTIONS)
def test_every_input_is_mapped_through_env(action: str) -> None:
    meta = load(action)
    mapped = set()
    for step in meta["runs"]["steps"]:
        values = list((step.get("env") or {}).values()) + list((step.get("with") or {}).values())
        for value in values:
            mapped.update(re.findall(r"inputs\.([A-Za-z0-9_-]+)", str(value)))
    assert set(meta.get("inputs") or {}) <= mapped, (
        f"{action}: inputs never mapped: {sorted(set(meta.get('inputs') or {}) - mapped)}"
    )


@pytest.mark.parametrize("action", ACTIONS)
def test_readme_tables_match_action_yml(action: str) -> None:
    meta = load(action)
    assert readme_names(action, "Inputs") == list(meta.get("inputs") or {})
    assert readme_names(action, "Outputs") == list(meta.get("outputs") or {})


@pytest.mark.parametrize("action", ACTIONS)
def test_tusk_is_installed_one_way(action: str) -> None:
    """One install script (a virtualenv on GitHub's PEP 668 runners) for every action."""
    runs = [str(step.get("run", "")) for step in load(action)["runs"]["steps"]]
    assert any('"$GITHUB_ACTION_PATH/../install.sh"' in run for run in runs), action
    assert not any("pip install" in run for run in runs), f"{action} installs Tusk by hand"


def test_workflows_never_put_expressions_in_run() -> None:
    paths = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
    assert paths
    for path in paths:
        workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
        for job in (workflow.get("jobs") or {}).values():
            for step in job.get("steps") or []:
                assert "${{" not in str(step.get("run", "")), f"{path.name}: ${{{{ }}}} in run:"
