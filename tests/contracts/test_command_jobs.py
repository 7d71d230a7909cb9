"""The command jobs: every verb of the grammar asks for one, each has its own event named
after its kind, its request is the one envelope within GitHub's ten keys, the go-away
workflow runs each, and one reader takes each step's request from its dispatch."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from tusk.cli.init import RELEASE, caller_files
from tusk.contracts import commands
from tusk.contracts.commands import APPROVAL, COMMAND_JOBS, GO_AWAY, STOP, UNDO, job_of_verb
from tusk.contracts.models import (
    APPROVAL_EVENT_TYPE,
    GO_AWAY_EVENT_TYPE,
    STOP_EVENT_TYPE,
    UNDO_EVENT_TYPE,
    CommandRequest,
)
from tusk.errors import InputError
from tusk.text.commands import VERBS

ROOT = Path(__file__).resolve().parents[2]
NOW = datetime(2026, 3, 1, tzinfo=UTC)
UNDO_PAYLOAD = {
    "jobid": "undo-1234",
    "actor": "alice",
    "repo": "alice/widgets",
    "trust_level": "collaborator",
    "comment_id": "7",
    "comment_url": "https://github.com/alice/widgets/issues/1#issuecomment-7",
    "timestamp": NOW.isoformat(),
}


def test_every_verb_of_the_grammar_asks_for_one_command_job() -> None:
    assert {verb.name: job_of_verb(verb.name) for verb in VERBS} == {
        "go_away": GO_AWAY,
        "undo": UNDO,
        "stop": STOP,
    }
    assert job_of_verb("apply") is APPROVAL and job_of_verb("discard") is APPROVAL
    assert job_of_verb("fix") is None


def test_each_command_job_has_its_own_event_named_after_its_kind() -> None:
    events = [job.event_type for job in COMMAND_JOBS]
    assert events == ["tusk-go-away", "tusk-approval", "tusk-undo", "tusk-stop"]
    assert tuple(events) == (
        GO_AWAY_EVENT_TYPE,
        APPROVAL_EVENT_TYPE,
        UNDO_EVENT_TYPE,
        STOP_EVENT_TYPE,
    )
    assert len({job.kind for job in COMMAND_JOBS}) == len(COMMAND_JOBS)


@pytest.mark.parametrize("job", COMMAND_JOBS, ids=lambda job: job.kind)
def test_every_command_request_is_the_envelope_within_ten_keys(job: commands.CommandJob) -> None:
    assert issubclass(job.request, CommandRequest)
    assert set(CommandRequest.model_fields) <= set(job.request.model_fields)
    assert len(job.request.model_fields) <= 10  # GitHub's client_payload holds no more


def test_the_go_away_workflow_and_its_caller_run_every_command_job() -> None:
    reusable = yaml.safe_load((ROOT / ".github/workflows/tusk-go-away.yml").read_text())
    guards = " ".join(str(job.get("if", "")) for job in reusable["jobs"].values())
    caller = yaml.safe_load(caller_files(RELEASE)[".github/workflows/go-away.yml"])
    # PyYAML reads the key ``on`` as True.
    types = caller[True]["repository_dispatch"]["types"]
    for job in COMMAND_JOBS:
        assert f"github.event.action == '{job.event_type}'" in guards
        assert job.event_type in types
        assert f"github.event.action == '{job.event_type}'" in caller["jobs"]["go-away"]["if"]


def test_a_step_reads_its_request_from_the_whole_event_or_the_payload(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"action": "tusk-undo", "client_payload": UNDO_PAYLOAD}))
    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps(UNDO_PAYLOAD))
    for path in (event, payload):
        request = commands.read_request(UNDO, path)
        assert (request.actor, request.comment_id, request.trust_level) == (
            "alice",
            "7",
            "collaborator",
        )


def test_a_dispatch_of_another_command_is_refused_with_its_guard(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"action": "tusk-undo", "client_payload": UNDO_PAYLOAD}))
    with pytest.raises(InputError) as caught:
        commands.read_request(GO_AWAY, event)
    assert "'tusk-undo' dispatch, not 'tusk-go-away'" in caught.value.title
    assert "github.event.action == 'tusk-go-away'" in (caught.value.hint or "")


def test_a_payload_that_is_not_the_request_names_each_problem(tmp_path: Path) -> None:
    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps({**UNDO_PAYLOAD, "verb": "apply"}))
    with pytest.raises(InputError) as caught:
        commands.read_request(UNDO, payload)
    assert caught.value.title == "the undo payload is not a valid request"
    assert "verb" in (caught.value.hint or "")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(InputError, match="cannot read the approval payload"):
        commands.read_request(APPROVAL, tmp_path / "bad.json")
