"""run-claude's action.yml: inputs through env only, outputs wired, README in step."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ACTION = Path(__file__).resolve().parents[2] / "actions" / "run-claude"


def load() -> dict:
    return yaml.safe_load((ACTION / "action.yml").read_text())


def test_no_expression_inside_run() -> None:
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


def test_every_output_comes_from_the_run_step() -> None:
    action = load()
    for name, output in action["outputs"].items():
        assert output["value"] == f"${{{{ steps.run.outputs.{name} }}}}"


def test_cleanup_always_runs() -> None:
    steps = load()["runs"]["steps"]
    cleanup = [s for s in steps if "--cleanup" in s.get("run", "")]
    assert cleanup and all(s.get("if") == "always()" for s in cleanup)


def test_readme_tables_match_the_action() -> None:
    action = load()
    readme = (ACTION / "README.md").read_text()
    inputs = re.findall(r"^\| `([a-z-]+)` \| (?:yes|no) \|", readme, flags=re.M)
    outputs = re.findall(r"^\| `([a-z-]+)` \| [^|]+\|$", readme, flags=re.M)
    assert inputs == list(action["inputs"])
    assert outputs == list(action["outputs"])
