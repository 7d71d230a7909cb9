"""run-claude's action.yml beyond what every action is checked for
(tests/platform): outputs come from the run step, and cleanup always runs."""

from __future__ import annotations

from pathlib import Path

import yaml

ACTION = Path(__file__).resolve().parents[2] / "actions" / "run-claude"


def load() -> dict:
    return yaml.safe_load((ACTION / "action.yml").read_text())


def test_every_output_comes_from_the_run_step() -> None:
    action = load()
    for name, output in action["outputs"].items():
        assert output["value"] == f"${{{{ steps.run.outputs.{name} }}}}"


def test_cleanup_runs_even_when_the_run_step_failed() -> None:
    steps = load()["runs"]["steps"]
    cleanup = [s for s in steps if "--cleanup" in s.get("run", "")]
    assert cleanup and all(s.get("if") == "always()" for s in cleanup)
    assert steps.index(cleanup[-1]) == len(steps) - 1


def test_secrets_reach_only_the_run_step() -> None:
    steps = load()["runs"]["steps"]
    holders = [
        s["name"]
        for s in steps
        if any("token" in str(v) or "api-key" in str(v) for v in (s.get("env") or {}).values())
    ]
    assert holders == ["Run Claude Code"]
