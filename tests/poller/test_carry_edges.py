"""Late follow-ups at the edges (MISSION C1): a record that lands after the close with no
new notification, a run that failed or died, a limit across runs, and two pollers that
carry the same follow-up at one instant. Each is carried once, or said refused, and the
thread is told which."""

from __future__ import annotations

from typing import Any

import pytest
from poller_helpers import BOT, CONTROL, REPO, SETTINGS, issue, make_poller, scenario
from test_carry import CLOSED, late_followup, log_outcomes, mentioned, thread_notes
from test_followups import STARTED, with_run
from test_limits_across_runs import limited, replies, seed_run

from tusk.issues import followups
from tusk.poller import carry
from tusk.poller.core import PollState
from tusk.text.markers import parse_markers


def poke(github: Any) -> None:
    """Something new on the thread, so the next cycle reads threads (not a 304)."""
    github.gateway("alice").post(f"/repos/{REPO}/issues/1/comments", json={"body": "ok"})


def test_a_record_that_lands_after_the_close_is_carried_by_an_idle_cycle(
    harness: Any, local_github: Any
) -> None:
    """A hand-over racing the write-up records the follow-up after the log issue closed,
    when no notification is left to read: the next cycle is a 304, and sweeps all the
    same (before, it waited for a cycle that read threads, within the window, or never)."""
    h = harness(with_run(scenario(issues=[issue(1, [STARTED, mentioned()])]), **CLOSED))
    state, first = h.poller.cycle(PollState())
    assert first.carried == [] and h.sent().tasks == []
    node = late_followup(local_github)
    local_github.advance(50 * 60)  # no thread is read for most of the window
    state, idle = h.poller.cycle(state)
    assert idle.threads == 0  # no thread to read: an idle cycle
    assert [doc.jobid for doc in h.sent().tasks] == [carry.carried_job_id(REPO, node)]
    assert (
        log_outcomes(local_github) == {node: {"carried"}} and len(thread_notes(local_github)) == 1
    )
    assert any(line.startswith("carried over:") for line in idle.lines())
    _, again = h.poller.cycle(state)
    assert again.carried == [] and len(h.sent().order) == 1


def test_a_poller_down_longer_than_the_window_still_carries_what_landed_meanwhile(
    harness: Any, local_github: Any
) -> None:
    """Scheduled polls can be late by hours: the sweep reads back to where the last
    complete one began (kept in the poll state), not only over a run's budget and lease."""
    h = harness(with_run(scenario(issues=[issue(1, [STARTED, mentioned()])]), **CLOSED))
    state, _ = h.poller.cycle(PollState())
    assert state.swept_since is not None
    node = late_followup(local_github)
    local_github.advance(3 * 3600)  # the poller is down far past the 60-minute window
    stateless = make_poller(local_github)
    _, without = stateless.poller.cycle(PollState())
    assert without.carried == []  # without its state a poller sees only the window
    _, report = h.poller.cycle(state)
    assert not report.errors, report.errors
    assert [doc.jobid for doc in h.sent().tasks] == [carry.carried_job_id(REPO, node)]
    assert (
        log_outcomes(local_github) == {node: {"carried"}} and len(thread_notes(local_github)) == 1
    )


def test_the_sweeps_mark_moves_only_once_it_is_half_a_window_old(
    harness: Any, local_github: Any
) -> None:
    """An idle poll must leave the poll state as it was (a scheduled poller saves its
    cache only when the state changed); the mark moves when it would start to matter."""
    h = harness(with_run(scenario(issues=[issue(1, [STARTED, mentioned()])]), **CLOSED))
    state, _ = h.poller.cycle(PollState())
    first = state.swept_since
    local_github.advance(10 * 60)
    state, _ = h.poller.cycle(state)
    assert state.swept_since == first
    local_github.advance(25 * 60)  # 35 minutes: past half the 60-minute window
    state, _ = h.poller.cycle(state)
    assert state.swept_since is not None and state.swept_since > str(first)


def test_a_sweep_reaching_past_its_first_page_reads_the_rest(
    harness: Any, local_github: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More log issues changed since the last sweep than one page holds: the ones beyond
    it are read too (here a page of one, so the late record sits on the second page)."""
    scn = with_run(scenario(issues=[issue(1, [STARTED, mentioned()])]), **CLOSED)
    control = next(r for r in scn["repos"] if r["name"] == CONTROL)
    control["issues"].append({**control["issues"][0], "number": 2, "title": "[Agent Log] other"})
    h = harness(scn)
    state, _ = h.poller.cycle(PollState())
    node = late_followup(local_github)
    local_github.advance(5)
    local_github.gateway("agent").post(f"/repos/{CONTROL}/issues/2/comments", json={"body": "x"})
    monkeypatch.setattr(carry, "PAGE", 1)
    _, report = h.poller.cycle(state)
    assert not report.errors, report.errors
    assert [doc.jobid for doc in h.sent().tasks] == [carry.carried_job_id(REPO, node)]


@pytest.mark.parametrize(
    "log",
    [
        {"labels": ["workflow", "bug"]},  # failed: open under bug
        {"state": "closed", "state_reason": "not_planned", "labels": ["workflow", "bug"]},
    ],
    ids=["open-failed", "closed-failed"],
)
def test_a_failed_runs_follow_up_is_carried_once(
    harness: Any, local_github: Any, log: dict[str, Any]
) -> None:
    h = harness(with_run(scenario(issues=[issue(1, [STARTED, mentioned()])]), **log))
    node = late_followup(local_github, how="missed")
    _, report = h.poller.cycle(PollState())
    assert not report.errors, report.errors
    assert [doc.jobid for doc in h.sent().tasks] == [carry.carried_job_id(REPO, node)]
    assert log_outcomes(local_github)[node] == {"missed", "carried"}
    poke(local_github)
    h.poller.cycle(PollState())
    make_poller(local_github).poller.cycle(PollState())  # a second poller: nothing more
    assert len(h.sent().order) == 1 and len(thread_notes(local_github)) == 1


def test_a_dead_runs_follow_up_is_carried_once_it_is_past_its_budget(
    harness: Any, local_github: Any
) -> None:
    """A runner lost mid-session leaves the log issue open with a follow-up undelivered:
    while the run may still be going it is kept; past its budget and lease it is carried."""
    h = harness(with_run(scenario(issues=[issue(1, [STARTED, mentioned()])])))
    node = late_followup(local_github)
    h.poller.cycle(PollState())
    assert h.sent().tasks == []  # in flight: it may still deliver it
    local_github.advance(3 * 3600)
    poke(local_github)
    _, report = h.poller.cycle(PollState())
    assert report.dead_runs and report.carried
    assert [doc.jobid for doc in h.sent().tasks] == [carry.carried_job_id(REPO, node)]
    assert len(thread_notes(local_github)) == 1


def test_a_carried_follow_up_waits_for_a_limit_then_runs_once(
    harness: Any, local_github: Any
) -> None:
    """bob has used his one run: the carried follow-up is answered on the thread as a fresh
    mention is, not dispatched, and kept (a ``waiting`` record keeps it in the window);
    once the limit allows it, it is carried once."""
    settings = limited(runs_per_requester=1)
    h = harness(with_run(scenario(issues=[issue(1, [STARTED, mentioned()])]), **CLOSED), settings)
    seed_run(local_github, "job-bob", requester="bob")
    node = late_followup(local_github)
    _, report = h.poller.cycle(PollState())
    assert h.sent().tasks == [] and report.over_limit and report.carried == []
    assert log_outcomes(local_github) == {node: {"waiting"}}
    [reply] = replies(local_github, 1)
    assert carry.carried_job_id(REPO, node) in reply["body"]
    for _ in range(2):  # still over, 40 minutes apart: answered once, kept in the window
        local_github.advance(40 * 60)
        poke(local_github)
        h.poller.cycle(PollState())
    assert len(replies(local_github, 1)) == 1 and h.sent().tasks == []
    # 80 minutes on, past the 60-minute window but for the waiting records, the limit is
    # raised: the next sweep (another poller) carries it, once.
    raised = make_poller(local_github)
    poke(local_github)
    _, later = raised.poller.cycle(PollState())
    assert later.carried and [doc.jobid for doc in h.sent().tasks] == [
        carry.carried_job_id(REPO, node)
    ]
    assert log_outcomes(local_github)[node] == {"waiting", "carried"}
    assert len(thread_notes(local_github)) == 1


def test_a_carried_follow_up_a_limit_drops_is_refused_and_the_thread_told(
    harness: Any, local_github: Any
) -> None:
    settings = limited(runs_per_requester=1)
    settings = settings.model_copy(
        update={"limits": settings.limits.model_copy(update={"over_limit": "drop"})}
    )
    h = harness(with_run(scenario(issues=[issue(1, [STARTED, mentioned()])]), **CLOSED), settings)
    seed_run(local_github, "job-bob", requester="bob")
    node = late_followup(local_github)
    h.poller.cycle(PollState())
    assert h.sent().tasks == [] and log_outcomes(local_github) == {node: {"refused"}}
    assert len(replies(local_github, 1)) == 1 and thread_notes(local_github) == []


def test_two_pollers_carrying_at_one_instant_tell_the_thread_once(
    harness: Any, local_github: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both dispatch (one job) and record ``carried``, and each looked for the thread's
    note before the other posted it: only the sweep whose record came first posts it."""
    h = harness(with_run(scenario(issues=[issue(1, [STARTED, mentioned()])]), **CLOSED))
    node = late_followup(local_github)
    other = make_poller(local_github)
    real_post = carry.post_marked_comment
    raced: list[bool] = []

    def post(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("kind") == "followup-carried" and not raced:
            raced.append(True)
            # The other poller sweeps now: it saw the follow-up uncarried too.
            comments = followups.read(other.bot_gateway, CONTROL, 1)
            [followup] = [f for f in followups.recorded(comments, bot=BOT) if f.node == node]
            carry.note_carried(
                other.bot_gateway,
                SETTINGS,
                log_issue=1,
                thread=(REPO, 1),
                followup=followup,
                jobid=carry.carried_job_id(REPO, node),
            )
            kwargs["look_first"] = False  # this one looked before the other posted
        return real_post(*args, **kwargs)

    monkeypatch.setattr(carry, "post_marked_comment", post)
    monkeypatch.setattr(type(other), "bot_gateway", property(lambda s: s.poller.bot), raising=False)
    h.poller.cycle(PollState())
    assert raced
    assert log_outcomes(local_github) == {node: {"carried"}}
    assert len(thread_notes(local_github)) == 1


def test_a_lost_answer_to_the_carried_record_makes_one_record(
    harness: Any, local_github: Any
) -> None:
    """The ``carried`` record lands but its answer is lost: it is found by its nonce, not
    posted again, and the thread is told once."""
    h = harness(with_run(scenario(issues=[issue(1, [STARTED, mentioned()])]), **CLOSED))
    node = late_followup(local_github)
    local_github.add_fault(
        "POST", rf"/repos/{CONTROL}/issues/1/comments$", status=502, lands=True, count=1
    )
    _, report = h.poller.cycle(PollState())
    assert not report.errors, report.errors
    comments = followups.read(local_github.gateway("agent"), CONTROL, 1)
    records = [
        data
        for c in comments
        for data in parse_markers(c["body"], "followup-delivered")
        if data.get("node") == node and data.get("how") == "carried"
    ]
    assert len(records) == 1
    assert len(thread_notes(local_github)) == 1 and len(h.sent().order) == 1
