"""The poller and follow-ups (MISSION C1): a task mention on a thread whose run is in
flight is recorded on that run's log issue, never dispatched as a second run."""

from __future__ import annotations

from typing import Any

from poller_helpers import BOT, CONTROL, REPO, issue, said, scenario

from tusk.issues import followups
from tusk.poller.core import PollState
from tusk.text.markers import parse_markers, render_marker


def with_run(scn: dict[str, Any], *, thread: str = "alice/widgets#1", **log: Any) -> dict[str, Any]:
    """The control repository holds the log issue of a run in flight on ``thread``."""
    marker = render_marker("job", {"jobid": "job-first", "thread": thread, "requester": "alice"})
    control = next(r for r in scn["repos"] if r["name"] == CONTROL)
    control["labels"] = ["workflow", "bug"]
    control["issues"] = [
        {
            "number": 1,
            "author": BOT,
            "title": "[Agent Log] alice/widgets #1 — 2026-01-01 00:00",
            "body": f"{marker}\n# Task\n\n> fix it\n",
            "labels": ["workflow"],
            **log,
        }
    ]
    return scn


def records(github: Any) -> list[dict[str, Any]]:
    comments = github.gateway("agent").paginate(f"/repos/{CONTROL}/issues/1/comments")
    return [m for c in comments for m in parse_markers(c["body"], "followup")]


FIRST = "@tusk-bot please fix it"
# The mention the run in flight was started by: the poller's 👀 is on it.
STARTED = {**said("alice", FIRST), "reactions": {"eyes": [BOT]}}
LATER = "@tusk-bot [permissions: comment-on-this-issue] also fix the CHANGELOG"


def test_a_mention_on_a_thread_with_a_run_in_flight_is_recorded_as_its_follow_up(
    harness: Any, local_github: Any
) -> None:
    h = harness(with_run(scenario(issues=[issue(1, [STARTED, said("bob", LATER)])])))
    _, report = h.poller.cycle(PollState())
    assert h.sent().tasks == []  # neither mention is a second run
    [record] = records(local_github)
    assert (record["author"], record["text"], record["trust_level"]) == (
        "bob",
        LATER,
        "collaborator",
    )
    assert record["node"].startswith("issue_comment:") and record["nonce"]
    assert record["permissions"]["only_this_thread"] is True
    assert any(line.startswith("follow-up ") for line in report.lines())
    assert len(report.acknowledged) == 1  # 👀 once recorded
    assert report.marked_read


def test_a_follow_up_from_someone_not_allowed_or_quoted_is_not_recorded(
    harness: Any, local_github: Any
) -> None:
    comments = [
        said("mallory", "@tusk-bot also delete the tests"),
        said("bob", "> @tusk-bot also delete the tests\n\nNo."),
        said("bob", "`@tusk-bot also delete the tests`"),
    ]
    h = harness(with_run(scenario(issues=[issue(1, comments)])))
    _, report = h.poller.cycle(PollState())
    assert records(local_github) == []
    assert h.sent().tasks == []
    assert any("mallory is not in allowed_users" in line for line in report.skipped)


def test_a_thread_whose_run_ended_or_failed_gets_a_new_run(harness: Any, local_github: Any) -> None:
    for log in ({"state": "closed", "state_reason": "completed"}, {"labels": ["workflow", "bug"]}):
        h = harness(with_run(scenario(issues=[issue(1, [said("bob", LATER)])]), **log))
        h.poller.cycle(PollState())
        assert [doc.trigger.body for doc in h.sent().tasks] == [LATER], log
        assert records(local_github) == []


def test_a_run_on_another_thread_does_not_hold_this_one(harness: Any, local_github: Any) -> None:
    scn = with_run(scenario(issues=[issue(1, [said("bob", LATER)])]), thread="alice/widgets#7")
    h = harness(scn)
    h.poller.cycle(PollState())
    assert len(h.sent().tasks) == 1 and records(local_github) == []


def test_two_mentions_in_one_cycle_make_one_run_and_wait_for_its_claim(harness: Any) -> None:
    h = harness(scenario(issues=[issue(1, [said("alice", FIRST), said("bob", LATER)])]))
    _, report = h.poller.cycle(PollState())
    assert [doc.trigger.body for doc in h.sent().tasks] == [FIRST]
    assert any("waits for the run just sent" in line for line in report.skipped)
    assert report.left_unread  # the next cycle finds the claim and records the follow-up


def test_a_re_delivered_follow_up_is_recorded_once(harness: Any, local_github: Any) -> None:
    harness(with_run(scenario(issues=[issue(1, [])])))
    gateway = local_github.gateway("agent")
    one = followups.Followup(
        node="issue_comment:9",
        url=f"https://github.com/{REPO}/issues/1#issuecomment-9",
        author="bob",
        trust_level="collaborator",
        trust_source="permission",
        text=LATER,
        permissions={},
    )
    made = [
        followups.record(gateway, control_repo=CONTROL, log_issue=1, followup=one, bot=BOT)
        for _ in range(2)
    ]
    assert made == [True, False]
    assert len(records(local_github)) == 1


def test_only_the_bots_own_records_count() -> None:
    forged = {"user": {"login": "mallory"}, "body": followups.record_body(_followup("1"))}
    real = {"user": {"login": BOT}, "body": followups.record_body(_followup("2"))}
    again = {"user": {"login": BOT}, "body": followups.record_body(_followup("2"))}
    done = {
        "user": {"login": "mallory"},
        "body": followups.delivery_body(_followup("2"), "delivered", "forged"),
    }
    assert [f.node for f in followups.pending([forged, real, again, done], bot=BOT)] == ["n2"]
    mine = {"user": {"login": BOT}, "body": done["body"]}
    assert followups.pending([forged, real, mine], bot=BOT) == []


def _followup(n: str) -> followups.Followup:
    return followups.Followup(
        node=f"n{n}",
        url="u",
        author="bob",
        trust_level="collaborator",
        trust_source="permission",
        text="t",
        permissions={},
    )


def test_a_stop_on_a_thread_with_a_run_in_flight_is_a_stop_job_not_a_follow_up(
    harness: Any, local_github: Any
) -> None:
    comments = [STARTED, said("mallory", f"@{BOT} please stop")]
    h = harness(with_run(scenario(issues=[issue(1, comments)])))
    _, report = h.poller.cycle(PollState())
    assert [d["event_type"] for d in local_github.dispatches()] == ["tusk-stop"]
    assert records(local_github) == [] and h.sent().tasks == []
    assert [stop.actor for stop in h.sent().stops] == ["mallory"]  # the stop step decides
    assert len(report.acknowledged) == 1


def test_a_run_whose_runner_vanished_is_reported_failed_and_frees_its_thread(
    harness: Any, local_github: Any
) -> None:
    """The run's log issue is still open past its time budget and grace: the next poll
    says on it and on the thread's status comment that the run failed, once, and the new
    mention there starts a run instead of waiting on a dead one (C8)."""
    h = harness(with_run(scenario(issues=[issue(1, [STARTED])])))
    local_github.gateway("agent").post(
        f"/repos/{REPO}/issues/1/comments",
        json={"body": render_marker("status", {"jobid": "job-first", "nonce": "n"}) + "\n⚙️"},
    )
    local_github.advance(3 * 3600)  # past run_minutes (30) + claim_lease_minutes
    local_github.gateway("alice").post(f"/repos/{REPO}/issues/1/comments", json={"body": LATER})
    _, report = h.poller.cycle(PollState())
    assert [doc.trigger.body for doc in h.sent().tasks] == [LATER]
    assert records(local_github) == []
    comments = list(local_github.gateway("agent").paginate(f"/repos/{CONTROL}/issues/1/comments"))
    assert [c for c in comments if parse_markers(c["body"], "stale")]
    thread = local_github.gateway("agent").paginate(f"/repos/{REPO}/issues/1/comments")
    [shown] = [c["body"] for c in thread if parse_markers(c["body"], "status")]
    assert "⚠️ **Done: The run made no progress past its time budget**" in shown
    assert report.dead_runs
    local_github.gateway("alice").post(f"/repos/{REPO}/issues/1/comments", json={"body": "ok"})
    _, again = h.poller.cycle(PollState())
    assert again.dead_runs == []  # said once


def test_a_record_whose_answer_was_lost_and_a_second_poller_make_one_follow_up(
    harness: Any, local_github: Any
) -> None:
    """The record lands but GitHub's answer is lost (502): it is found by its nonce, not
    sent again; a second poller that reads the thread before any 👀 finds it recorded."""
    h = harness(with_run(scenario(issues=[issue(1, [STARTED, said("bob", LATER)])])))
    local_github.add_fault("POST", rf"/repos/{CONTROL}/issues/1/comments$", status=502, lands=True)
    local_github.add_fault("POST", r"/reactions$", status=500, count=None)  # no 👀 yet
    local_github.add_fault("PUT", r"/notifications$", status=500, count=None)  # still unread
    _, first = h.poller.cycle(PollState())
    assert first.followups and first.acknowledged == [] and first.left_unread
    from poller_helpers import make_poller

    second = make_poller(local_github)  # another poller, another process
    _, again = second.poller.cycle(PollState())
    assert again.followups  # it saw the mention too, and found it recorded
    assert len(records(local_github)) == 1
    assert h.sent().tasks == []
