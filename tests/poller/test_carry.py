"""Follow-ups a run could no longer take (MISSION C1): recorded on a log issue after the
run's last pass, each becomes the thread's next task once, and the thread is told."""

from __future__ import annotations

from typing import Any

from poller_helpers import BOT, CONTROL, REPO, issue, make_poller, said, scenario
from test_followups import LATER, STARTED, with_run

from tusk.issues import followups
from tusk.poller import carry
from tusk.poller.core import PollState
from tusk.text.markers import parse_markers

CLOSED = {"state": "closed", "state_reason": "completed"}


def late_followup(github: Any, *, author: str = "bob", how: str | None = None) -> str:
    """Record ``author``'s latest comment on the thread as a follow-up of the (closed) run,
    as a poller whose listing lagged would; ``how``: what the run said of it. Its node."""
    gateway = github.gateway("agent")
    comments = list(gateway.paginate(f"/repos/{REPO}/issues/1/comments"))
    mention = [c for c in comments if c["user"]["login"] == author][-1]
    followup = followups.Followup(
        node=followups.node_key("issue_comment", str(mention["id"])),
        url=mention["html_url"],
        author=author,
        trust_level="collaborator",
        trust_source="permission",
        text=mention["body"],
        permissions={},
        nonce="n1",
    )
    path = f"/repos/{CONTROL}/issues/1/comments"
    gateway.post(path, json={"body": followups.record_body(followup)})
    if how is not None:
        gateway.post(path, json={"body": followups.delivery_body(followup, how, how)})
    return followup.node


def log_outcomes(github: Any) -> dict[str, set[str]]:
    comments = list(github.gateway("agent").paginate(f"/repos/{CONTROL}/issues/1/comments"))
    return carry.outcomes(comments, bot=BOT)


def thread_notes(github: Any) -> list[str]:
    comments = github.gateway("agent").paginate(f"/repos/{REPO}/issues/1/comments")
    return [c["body"] for c in comments if parse_markers(c["body"], "followup-carried")]


def mentioned(who: str = "bob") -> dict[str, Any]:
    """``who``'s follow-up on the thread, recorded before: the poller's 👀 is on it."""
    return {**said(who, LATER), "reactions": {"eyes": [BOT]}}


def test_a_follow_up_recorded_after_the_run_ended_is_the_next_runs_task_once(
    harness: Any, local_github: Any
) -> None:
    h = harness(with_run(scenario(issues=[issue(1, [STARTED, mentioned()])]), **CLOSED))
    node = late_followup(local_github)
    _, report = h.poller.cycle(PollState())
    [doc] = h.sent().tasks
    assert (doc.trigger.body, doc.actor, doc.trust_level) == (LATER, "bob", "collaborator")
    assert doc.jobid == carry.carried_job_id(REPO, node)
    assert not report.errors, report.errors
    assert doc.permission_config.only_this_thread  # its own marker, as a trigger's
    assert log_outcomes(local_github) == {node: {"carried"}}
    [note] = thread_notes(local_github)
    assert doc.trigger.url in note and "new run" in note and "@" not in note.split("-->")[1]
    assert report.carried
    local_github.gateway("alice").post(f"/repos/{REPO}/issues/1/comments", json={"body": "ok"})
    _, again = h.poller.cycle(PollState())
    assert again.carried == [] and len(h.sent().order) == 1  # never twice
    assert len(thread_notes(local_github)) == 1


def test_a_follow_up_the_run_said_missed_is_carried_and_a_delivered_one_never(
    harness: Any, local_github: Any
) -> None:
    h = harness(with_run(scenario(issues=[issue(1, [STARTED, mentioned()])]), **CLOSED))
    node = late_followup(local_github, how="missed")
    h.poller.cycle(PollState())
    assert [doc.trigger.body for doc in h.sent().tasks] == [LATER]
    assert log_outcomes(local_github)[node] == {"missed", "carried"}

    h = harness(with_run(scenario(issues=[issue(1, [STARTED, mentioned()])]), **CLOSED))
    late_followup(local_github, how="delivered")
    _, report = h.poller.cycle(PollState())
    assert h.sent().tasks == [] and report.carried == [] and thread_notes(local_github) == []


def test_a_follow_up_from_someone_not_allowed_is_not_carried(
    harness: Any, local_github: Any
) -> None:
    h = harness(with_run(scenario(issues=[issue(1, [STARTED, mentioned("mallory")])]), **CLOSED))
    node = late_followup(local_github, author="mallory")
    _, report = h.poller.cycle(PollState())
    assert h.sent().tasks == [] and thread_notes(local_github) == []
    assert log_outcomes(local_github) == {node: {"refused"}}
    assert any("mallory is not in allowed_users" in line for line in report.skipped)


def test_a_run_still_in_flight_keeps_its_follow_ups(harness: Any, local_github: Any) -> None:
    h = harness(with_run(scenario(issues=[issue(1, [STARTED, mentioned()])])))
    late_followup(local_github)
    h.poller.cycle(PollState())
    assert h.sent().tasks == [] and log_outcomes(local_github) == {}


def test_a_lost_dispatch_answer_and_a_second_poller_make_one_job(
    harness: Any, local_github: Any
) -> None:
    """The dispatch lands but its answer is lost: nothing is said carried, the next poll
    sends it again as the same job (the claim runs it once); a second poller too."""
    h = harness(with_run(scenario(issues=[issue(1, [STARTED, mentioned()])]), **CLOSED))
    node = late_followup(local_github)
    local_github.add_fault("POST", r"/dispatches$", status=502, lands=True, count=None)
    _, first = h.poller.cycle(PollState())
    assert first.errors and first.carried == [] and log_outcomes(local_github) == {}
    assert h.sent().order  # it landed all the same
    local_github.clear_faults()
    second = make_poller(local_github)  # another process: no memory of the first
    local_github.gateway("alice").post(f"/repos/{REPO}/issues/1/comments", json={"body": "ok"})
    _, again = second.poller.cycle(PollState())
    assert again.carried
    # One job however often sent: its claim runs it once.
    assert len(h.sent().order) > 1 and set(h.sent().order) == {carry.carried_job_id(REPO, node)}
    assert log_outcomes(local_github) == {node: {"carried"}}
    assert len(thread_notes(local_github)) == 1
