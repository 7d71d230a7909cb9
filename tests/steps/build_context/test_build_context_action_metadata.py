"""build-context's action.yml: inputs through env only, outputs wired, README tables in step."""

from __future__ import annotations

from pathlib import Path

import yaml

from tusk.steps.build_context import main as build_main

ACTION = Path(__file__).resolve().parents[3] / "actions" / "build-context"


def load() -> dict:
    return yaml.safe_load((ACTION / "action.yml").read_text(encoding="utf-8"))


def test_every_declared_output_is_set_by_the_command_in_every_outcome() -> None:
    action = load()
    for name, output in action["outputs"].items():
        assert output["value"] == f"${{{{ steps.build.outputs.{name} }}}}"
    assert set(action["outputs"]) == set(build_main.EMPTY_OUTPUTS)
