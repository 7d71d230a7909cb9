"""A follow-up at each boundary of a run (MISSION C1), with one poller, two pollers, and
a dispatch whose answer is lost: delivered to the run, or carried as the next run's task,
exactly once; never lost, never doubled; and the thread is told when it is carried.

The run's side is its inbox (``Inbox.deliver`` at a safe point of the main session or
before a self-check, ``Inbox.close`` after the last pass); the write-up follows the close
and ends by closing the log issue. Before the claim is covered where the poller and
build-context hand the mention over (``test_followups``, ``test_build_context_github``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from poller_helpers import BOT, CONTROL, REPO, issue, make_poller, scenario
from test_carry import late_followup, log_outcomes, mentioned, thread_notes
from test_followups import STARTED, with_run

from tusk.contracts.models import PermissionConfig, RunMetadata
from tusk.poller import carry
from tusk.poller.core import PollState
from tusk.steps.run_claude.session.followups import Inbox

RUN = RunMetadata(
    jobid="job-first",
    repo=REPO,
    trigger_url=f"https://github.example/{REPO}/issues/1#issuecomment-1",
    trigger_type="issue_comment",
    thread_number=1,
    log_issue_number=1,
    log_issue_url=f"https://github.example/{CONTROL}/issues/1",
    control_repo=CONTROL,
    task_path="task.md",
    context_path="context.md",
    context_file="context.json",
)


def inbox(github: Any) -> Inbox:
    return Inbox(gateway=github.gateway("agent"), run=RUN, bot=BOT, permissions=PermissionConfig())


def end_run(github: Any) -> None:
    """The write-up's last act: the log issue closes as completed."""
    github.gateway("agent").patch(
        f"/repos/{CONTROL}/issues/1", json={"state": "closed", "state_reason": "completed"}
    )


def main_session(github: Any) -> None:
    late_followup(github)
    assert inbox(github).deliver("to the running session")
    end_run(github)


def self_checks(github: Any) -> None:
    late_followup(github)
    assert inbox(github).deliver("before the self-checks")
    end_run(github)


def after_the_last_self_check(github: Any) -> None:
    late_followup(github)
    assert inbox(github).close()  # said missed
    end_run(github)


def write_up(github: Any) -> None:
    inbox(github).close()  # nothing waiting yet
    late_followup(github)  # recorded while the write-up runs: the issue is still open
    end_run(github)


def after_the_end(github: Any) -> None:
    inbox(github).close()
    end_run(github)
    late_followup(github)


BOUNDARIES: dict[str, tuple[Callable[[Any], None], bool]] = {
    # name: (what the run did, whether the follow-up reached it)
    "main-session": (main_session, True),
    "self-checks": (self_checks, True),
    "after-the-last-self-check": (after_the_last_self_check, False),
    "write-up": (write_up, False),
    "after-the-end": (after_the_end, False),
}


def poll_twice(h: Any, github: Any, how: str) -> None:
    """One poller's cycle, as ``how`` says: alone; with a second poller (no memory of the
    first) right after; or with the dispatch's answer lost, then a second poller."""
    if how == "lost-answer":
        github.add_fault("POST", r"/dispatches$", status=502, lands=True, count=None)
    h.poller.cycle(PollState())
    github.clear_faults()
    if how != "one-poller":
        github.gateway("alice").post(f"/repos/{REPO}/issues/1/comments", json={"body": "ok"})
        make_poller(github).poller.cycle(PollState())
    h.poller.cycle(PollState())  # and an idle cycle of the first


@pytest.mark.parametrize("how", ["one-poller", "two-pollers", "lost-answer"])
@pytest.mark.parametrize("boundary", list(BOUNDARIES))
def test_a_follow_up_at_each_boundary_is_delivered_or_carried_exactly_once(
    harness: Any, local_github: Any, boundary: str, how: str
) -> None:
    act, reached = BOUNDARIES[boundary]
    h = harness(with_run(scenario(issues=[issue(1, [STARTED, mentioned()])])))
    h.poller.cycle(PollState())  # the run is in flight: nothing to carry yet
    act(local_github)
    poll_twice(h, local_github, how)
    found = log_outcomes(local_github)
    assert len(found) == 1, found  # the follow-up has an outcome: never lost
    [(node, outcomes)] = found.items()
    if reached:
        assert outcomes == {"delivered"}
        assert h.sent().tasks == [] and thread_notes(local_github) == []
        return
    jobid = carry.carried_job_id(REPO, node)
    assert "carried" in outcomes and outcomes <= {"missed", "carried"}
    assert {doc.jobid for doc in h.sent().tasks} == {jobid}  # one job, however often sent
    [note] = thread_notes(local_github)  # told once
    assert jobid in note
