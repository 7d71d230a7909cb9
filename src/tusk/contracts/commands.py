"""The command jobs: a bot command, sent by the poller as one ``repository_dispatch`` and
run by a step of its own, never a task.

Each command job is one entry of ``COMMAND_JOBS``: its kind, the grammar's verbs that ask
for it (``tusk.text.commands``), its request (a ``CommandRequest``: who asked, where,
when, and the command's own fields) and its event type (``tusk-<kind>``,
``command_event_type``). The poller sends every one the same way
(``tusk.poller.dispatch.dispatch_command``) and each step reads its request with
``read_request``. A new command is its verb in the grammar, one entry here and its step;
the poller's cycle does not change.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import ValidationError

from tusk.contracts.config import describe_validation_errors
from tusk.contracts.models import (
    ApprovalRequest,
    CommandRequest,
    GoAwayRequest,
    StopRequest,
    UndoRequest,
    command_event_type,
)
from tusk.errors import InputError

R = TypeVar("R", bound=CommandRequest)


@dataclass(frozen=True)
class CommandJob(Generic[R]):
    """One command job: ``kind`` in code, logs and its event type, the grammar's
    ``verbs`` that ask for it, its ``request`` model and the ``step`` that runs it."""

    kind: str
    verbs: tuple[str, ...]
    request: type[R]
    step: str

    @property
    def event_type(self) -> str:
        return command_event_type(self.kind)

    @property
    def label(self) -> str:
        """The kind as people read it (``go-away``)."""
        return self.kind.replace("_", "-")


GO_AWAY: CommandJob[GoAwayRequest] = CommandJob("go_away", ("go_away",), GoAwayRequest, "go-away")
APPROVAL: CommandJob[ApprovalRequest] = CommandJob(
    "approval", ("apply", "discard"), ApprovalRequest, "apply"
)
UNDO: CommandJob[UndoRequest] = CommandJob("undo", ("undo",), UndoRequest, "undo")
STOP: CommandJob[StopRequest] = CommandJob("stop", ("stop",), StopRequest, "stop")

COMMAND_JOBS: tuple[CommandJob[Any], ...] = (GO_AWAY, APPROVAL, UNDO, STOP)


def job_of_verb(verb: str) -> CommandJob[Any] | None:
    """The command job a verb of the grammar asks for, or None."""
    return next((job for job in COMMAND_JOBS if verb in job.verbs), None)


def job_of_kind(kind: str) -> CommandJob[Any] | None:
    return next((job for job in COMMAND_JOBS if job.kind == kind), None)


def read_request(job: CommandJob[R], path: Path) -> R:
    """The request of ``job`` from a payload file or a whole ``repository_dispatch``
    event; a dispatch of another kind, or a payload that is not the job's request, is
    refused with what to do."""
    what = f"the {job.label} payload"
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise InputError(f"cannot read {what} {path}", str(error)) from error
    if isinstance(data, dict) and "client_payload" in data:
        if data.get("action") not in (None, job.event_type):
            raise InputError(
                f"the event is a {data.get('action')!r} dispatch, not {job.event_type!r}",
                f"Start {job.step} only from the {job.event_type} dispatch (guard the job "
                f"with `if: github.event.action == '{job.event_type}'`).",
            )
        data = data["client_payload"]
    try:
        return job.request.model_validate(data)
    except ValidationError as error:
        problems = "\n".join(f"  - {p}" for p in describe_validation_errors(error))
        raise InputError(
            f"{what} is not a valid request",
            f"{problems}\nThe poller sends it; check that poller and actions are the same version.",
        ) from error
