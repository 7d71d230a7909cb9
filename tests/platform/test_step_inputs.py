"""Each step's inputs are one model: action.yml and the model agree on every name and default.

An input is named once (``context-file`` is the field ``context_file``, the variable
``INPUT_CONTEXT_FILE`` and the flag ``--context-file``) and has one default, the one
action.yml declares; an input that is a secret or the API's address is mapped to the
variable the model says reads it.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import AliasChoices, TypeAdapter

from tusk.contracts.inputs import StepInputs, flag, input_env
from tusk.errors import InputError
from tusk.steps.build_context.main import Inputs as BuildContextInputs
from tusk.steps.go_away.main import Inputs as GoAwayInputs
from tusk.steps.merge_shards.main import Inputs as MergeShardsInputs
from tusk.steps.receive_shard.main import Inputs as ReceiveShardInputs

ACTIONS = Path(__file__).resolve().parents[2] / "actions"
STEPS: dict[str, type[StepInputs]] = {
    "receive-shard": ReceiveShardInputs,
    "merge-shards": MergeShardsInputs,
    "build-context": BuildContextInputs,
    "go-away": GoAwayInputs,
}
GITHUB_DEFAULT = re.compile(r"^\$\{\{\s*github\.(\w+)\s*\}\}$")


def action(step: str) -> dict[str, Any]:
    return yaml.safe_load((ACTIONS / step / "action.yml").read_text(encoding="utf-8"))


def env_mappings(step: str) -> dict[str, set[str]]:
    """Each variable the action's steps set, and every value it is given."""
    found: dict[str, set[str]] = {}
    for item in action(step)["runs"]["steps"]:
        for name, value in (item.get("env") or {}).items():
            found.setdefault(name, set()).add(str(value))
    return found


def aliases(model: type[StepInputs], field: str) -> list[str]:
    alias = model.model_fields[field].validation_alias
    if isinstance(alias, AliasChoices):
        return [str(choice) for choice in alias.choices]
    return [alias] if isinstance(alias, str) else [input_env(field)]


def disagreements(step: str, model: type[StepInputs]) -> list[str]:
    """Every way ``action.yml`` of ``step`` and ``model`` disagree (empty: they agree)."""
    inputs: dict[str, Any] = action(step).get("inputs") or {}
    env = env_mappings(step)
    problems = []
    for name, spec in inputs.items():
        if name in model.read_elsewhere:
            variable = model.read_elsewhere[name]
            if not any(f"inputs.{name}" in value for value in env.get(variable, ())):
                problems.append(f"{name}: not mapped to {variable}")
            continue
        field = name.replace("-", "_")
        if field not in model.model_fields:
            problems.append(f"{name}: no field {field} in {model.__name__}")
            continue
        info = model.model_fields[field]
        if bool(spec.get("required")) != info.is_required():
            problems.append(f"{name}: required {spec.get('required')} in action.yml")
        if not info.is_required():
            declared = str(spec.get("default", ""))
            github = GITHUB_DEFAULT.match(declared)
            if github:
                variable = f"GITHUB_{github.group(1).upper()}"
                if variable not in aliases(model, field) or info.default != "":
                    problems.append(f"{name}: defaults to {declared}, the model not to {variable}")
            elif declared == "":
                if info.default not in ("", None):
                    problems.append(f"{name}: empty default, the model's is {info.default!r}")
            elif TypeAdapter(info.annotation).validate_python(declared) != info.default:
                problems.append(f"{name}: default {declared!r}, the model's {info.default!r}")
        if env.get(input_env(field)) != {f"${{{{ inputs.{name} }}}}"}:
            problems.append(f"{name}: not mapped to {input_env(field)} as is")
        if aliases(model, field)[0] != input_env(field):
            problems.append(f"{name}: the model reads {aliases(model, field)[0]} first")
    for field in model.model_fields:
        if field.replace("_", "-") not in inputs:
            problems.append(f"{field}: a field of {model.__name__} but no input of {step}")
    return problems


@pytest.mark.parametrize("step", sorted(STEPS))
def test_every_input_of_the_action_is_its_models_field_with_the_same_default(step: str) -> None:
    assert disagreements(step, STEPS[step]) == []


def test_a_default_that_disagrees_with_action_yml_is_found() -> None:
    class Drifted(ReceiveShardInputs):
        context_file: str = "context.json"  # the default receive-shard's flag once had

    assert disagreements("receive-shard", Drifted) == [
        "context-file: default 'tusk-context.json', the model's 'context.json'"
    ]


def test_a_field_named_otherwise_than_its_input_is_found() -> None:
    class Renamed(GoAwayInputs):
        payload_file: str = ""

    assert "payload_file: a field of Renamed but no input of go-away" in disagreements(
        "go-away", Renamed
    )


def parsed(model: type[StepInputs], *argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    model.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_a_flag_wins_over_the_input_and_the_input_over_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TUSK_CONFIG", raising=False)
    monkeypatch.setenv("INPUT_CONTEXT_FILE", "from-input.json")
    monkeypatch.setenv("INPUT_TIMEOUT_SECONDS", "30")
    monkeypatch.setenv("INPUT_JOBID", "")  # an empty input counts as not given
    inputs = MergeShardsInputs.from_args(parsed(MergeShardsInputs, flag("timeout_seconds"), "5"))
    assert inputs.context_file == "from-input.json"
    assert inputs.timeout_seconds == 5.0
    assert inputs.jobid == "" and inputs.config == "tusk.yml"


def test_an_empty_payload_input_reads_the_triggering_event(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INPUT_PAYLOAD_FILE", "")
    monkeypatch.setenv("GITHUB_EVENT_PATH", "/runner/event.json")
    monkeypatch.setenv("GITHUB_REPOSITORY", "alice/tusk-control")
    inputs = ReceiveShardInputs.from_args(parsed(ReceiveShardInputs))
    assert inputs.payload_file == "/runner/event.json"
    assert inputs.repository == "alice/tusk-control"
    monkeypatch.setenv("INPUT_PAYLOAD_FILE", "given.json")
    assert ReceiveShardInputs.from_args(parsed(ReceiveShardInputs)).payload_file == "given.json"


def test_a_missing_or_bad_input_names_the_input_and_its_flag(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("INPUT_CONTEXT_FILE", raising=False)
    with pytest.raises(InputError) as caught:
        BuildContextInputs.from_args(parsed(BuildContextInputs))
    assert "context-file (--context-file)" in caught.value.hint
    monkeypatch.setenv("INPUT_TOTAL_SHARDS", "many")
    with pytest.raises(InputError) as caught:
        MergeShardsInputs.from_args(parsed(MergeShardsInputs))
    assert "total-shards (--total-shards)" in caught.value.hint
