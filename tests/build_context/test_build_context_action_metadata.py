"""build-context's action.yml: inputs through env only, outputs wired, README tables in step."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from tusk.actions.build_context import main as build_main

ACTION = Path(__file__).resolve().parents[2] / "actions" / "build-context"


def load() -> dict:
    return yaml.safe_load((ACTION / "action.yml").read_text(encoding="utf-8"))


def test_no_expression_inside_run_blocks_against_template_injection() -> None:
    for step in load()["runs"]["steps"]:
        assert "${{" not in step.get("run", ""), step["name"]


def test_every_input_is_mapped_through_env() -> None:
    action = load()
    mapped = {
        match
        for step in action["runs"]["steps"]
        for value in (step.get("env") or {}).values()
        for match in re.findall(r"\$\{\{\s*inputs\.([a-z-]+)\s*\}\}", str(value))
    }
    assert mapped == set(action["inputs"])


def test_every_declared_output_is_set_by_the_command_in_every_outcome() -> None:
    action = load()
    for name, output in action["outputs"].items():
        assert output["value"] == f"${{{{ steps.build.outputs.{name} }}}}"
    assert set(action["outputs"]) == set(build_main.EMPTY_OUTPUTS)


def test_readme_tables_match_the_action() -> None:
    action = load()
    readme = (ACTION / "README.md").read_text(encoding="utf-8")
    inputs = re.findall(r"^\| `([a-z-]+)` \| (?:yes|no) \|", readme, flags=re.M)
    outputs = re.findall(r"^\| `([a-z-]+)` \| [^|]+\|$", readme, flags=re.M)
    assert inputs == list(action["inputs"])
    assert outputs == list(action["outputs"])
