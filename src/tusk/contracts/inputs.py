"""A step's inputs: one model per composite action, each input named once.

A field is an input of the step's ``action.yml``: the input ``context-file``
is the field ``context_file``, reaches the process as ``INPUT_CONTEXT_FILE``
(the action maps ``inputs.context-file`` to it in ``env:``) and, run by hand,
as the flag ``--context-file``; the field's default is the input's default
(``tests/platform/test_step_inputs.py`` fails when ``action.yml`` and the
model disagree in a name or a default). An empty value counts as not given,
as an empty input does in Actions. An input whose default is the event's
(``${{ github.repository }}``) falls back to the runner's variable for it
(``GITHUB_REPOSITORY``); the payload falls back to the triggering event
(``GITHUB_EVENT_PATH``).

Inputs that are secrets or the API's address are no fields: the action maps
them to the ``TUSK_*`` variables ``tusk.contracts.config.load_secrets`` reads
(``read_elsewhere`` names them). Values are read once, at the step's entry
point (``from_args``); a bad or missing one is an ``InputError`` naming the
input and the flag.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, ClassVar, Self, get_args

import annotated_types
from pydantic import AliasChoices, Field, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, SettingsConfigDict

from tusk.contracts.ranges import float_in, int_in
from tusk.errors import InputError

INPUT_PREFIX = "INPUT_"


def input_env(field: str) -> str:
    """The variable an action maps the input of ``field`` to: ``INPUT_CONTEXT_FILE``."""
    return INPUT_PREFIX + field.upper()


def flag(field: str) -> str:
    """The command-line flag of ``field``: ``--context-file``."""
    return "--" + field.replace("_", "-")


def or_runner(field: str, variable: str, *, description: str) -> Any:
    """A field whose value, when the input is empty, is the runner's ``variable``."""
    return Field(
        default="",
        validation_alias=AliasChoices(input_env(field), variable),
        description=description,
    )


class StepInputs(BaseSettings):
    """Base of every step's inputs (subclass it and declare one field per input)."""

    model_config = SettingsConfigDict(
        env_prefix=INPUT_PREFIX,
        env_ignore_empty=True,
        case_sensitive=False,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
    )

    # Inputs of action.yml that are no field: input name -> the variable it is mapped to.
    read_elsewhere: ClassVar[dict[str, str]] = {}

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        """One flag per field; a flag not given leaves the input (or default) in force. A
        number with bounds is checked by argparse already, with the range in the message."""
        for name, info in cls.model_fields.items():
            where = f"input {name.replace('_', '-')}, ${input_env(name)}"
            default = "" if info.is_required() else f"; default: {info.default!r}"
            help_text = f"{info.description or name} ({where}{default})"
            parser.add_argument(
                flag(name), dest=name, default=None, type=_ranged(info), help=help_text
            )

    @classmethod
    def from_args(cls, args: argparse.Namespace | None = None) -> Self:
        """The inputs: flags first, then the action's ``INPUT_*`` variables, then defaults."""
        given = {
            name: value
            for name in cls.model_fields
            if (value := getattr(args, name, None)) not in (None, "")
        }
        try:
            return cls(**given)
        except ValidationError as error:
            raise InputError(
                f"{error.error_count()} bad or missing input(s)",
                "; ".join(_problem(problem) for problem in error.errors())
                + ". Set the action's input, or give the flag when running by hand.",
            ) from None


def _ranged(info: FieldInfo) -> Callable[[str], Any]:
    """The argparse type of a field: its range when it is a number with both bounds."""
    low: Any = next((m.ge for m in info.metadata if isinstance(m, annotated_types.Ge)), None)
    high: Any = next((m.le for m in info.metadata if isinstance(m, annotated_types.Le)), None)
    kinds = set(get_args(info.annotation)) | {info.annotation}
    if low is None or high is None:
        return str
    if float in kinds:
        return float_in(float(low), float(high))
    if int in kinds:
        return int_in(int(low), int(high))
    return str


def _problem(problem: Any) -> str:
    loc = problem.get("loc") or ("?",)
    name = str(loc[0]).removeprefix(INPUT_PREFIX.lower()).removeprefix(INPUT_PREFIX).lower()
    return f"{name.replace('_', '-')} ({flag(name)}): {problem.get('msg', 'invalid')}"


def config_input() -> Any:
    """The ``config`` input every step has: tusk.yml's path (``TUSK_CONFIG`` by hand)."""
    return Field(
        default="tusk.yml",
        validation_alias=AliasChoices(input_env("config"), "TUSK_CONFIG"),
        description="path of tusk.yml in the checked-out control repository",
    )


# The inputs that hold a token or the API's address, as the actions map them.
AGENT_TOKEN = {"agent-token": "TUSK_AGENT_TOKEN", "token": "TUSK_AGENT_TOKEN"}
API_URL = {"github-api-url": "TUSK_GITHUB_API_URL"}
OLD_API_URL = {"api-url": "TUSK_GITHUB_API_URL"}
