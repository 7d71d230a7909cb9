"""A command is one job type to the poller: a new verb, given its grammar entry and its
command job, is dispatched as its own event by the same cycle, acknowledged once and
never a task, with no change to the poller."""

from __future__ import annotations

from typing import Any

import pytest
from poller_helpers import REPO, issue, said, scenario

from tusk.contracts import commands
from tusk.contracts.commands import CommandJob
from tusk.contracts.models import UndoRequest
from tusk.poller.core import PollState
from tusk.text import commands as grammar

PAUSE = CommandJob("pause", ("pause",), UndoRequest, "pause")


@pytest.fixture
def a_new_verb(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grammar, "VERBS", (*grammar.VERBS, grammar.Verb("pause", "pause")))
    monkeypatch.setattr(commands, "COMMAND_JOBS", (*commands.COMMAND_JOBS, PAUSE))


def test_a_new_verb_is_dispatched_as_its_own_event_by_the_same_cycle(
    a_new_verb: None, harness: Any, local_github: Any
) -> None:
    comments = [said("alice", "@tusk-bot fix it"), said("mallory", "@tusk-bot please pause")]
    h = harness(scenario(issues=[issue(1, comments)]))
    _, report = h.poller.cycle(PollState())
    pauses = [d for d in local_github.dispatches() if d["event_type"] == "tusk-pause"]
    assert len(pauses) == 1
    request = UndoRequest.model_validate(pauses[0]["client_payload"])
    assert (request.actor, request.repo, request.comment_type) == ("mallory", REPO, "issue_comment")
    assert f"dispatched pause {request.jobid}" in report.lines()
    assert sorted(d["event_type"] for d in local_github.dispatches()) == [
        "tusk-pause",
        "tusk-shard",
    ]
    assert len(report.acknowledged) == 2  # the 👀 on each, once it was sent


def test_without_its_command_job_the_verb_is_a_task(harness: Any, local_github: Any) -> None:
    h = harness(scenario(issues=[issue(1, [said("alice", "@tusk-bot please pause")])]))
    h.poller.cycle(PollState())
    assert [d["event_type"] for d in local_github.dispatches()] == ["tusk-shard"]
