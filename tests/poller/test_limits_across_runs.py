"""Limits across runs against the local GitHub: the poller counts the log issues, answers a
mention over a limit on its thread, and lets it through once the window has moved on."""

from __future__ import annotations

from typing import Any

from poller_helpers import BOT, CONTROL, REPO, SETTINGS, issue, make_poller, said, scenario

from tusk.contracts.config import Settings
from tusk.contracts.models import RunMetadata
from tusk.issues.usage import read_runs, usage_marker
from tusk.poller.core import PollState
from tusk.steps.run_claude.limits_check import over_limit
from tusk.text.markers import first_marker, render_marker

DAY = 24 * 3600


def limited(**limits: Any) -> Settings:
    base = {"daily_budget_usd": None, "runs_per_requester": None, "runs_per_repository": None}
    return SETTINGS.model_copy(
        update={"limits": SETTINGS.limits.model_copy(update={**base, **limits})}
    )


def seed_run(
    github: Any, jobid: str, *, requester: str, cost: float = 0.0, repo: str = REPO
) -> int:
    """A run's log issue as build-context and run-claude leave it: the job marker with the
    requester, and the bot's progress comment with the spend so far."""
    agent = github.gateway("agent")
    marker = render_marker("job", {"jobid": jobid, "repo": repo, "requester": requester})
    created = agent.post(
        f"/repos/{CONTROL}/issues",
        json={
            "title": f"[Agent Log] {repo} {jobid}",
            "body": f"{marker}\n# Task",
            "labels": ["workflow"],
        },
    ).body
    progress = render_marker("progress", {"jobid": jobid, "nonce": "n"})
    agent.post(
        f"/repos/{CONTROL}/issues/{created['number']}/comments",
        json={"body": f"{progress}\n⏳ working\n{usage_marker(cost)}\n"},
    )
    return int(created["number"])


def replies(github: Any, number: int) -> list[dict[str, Any]]:
    comments = github.gateway("alice").paginate(f"/repos/{REPO}/issues/{number}/comments")
    return [c for c in comments if c["user"]["login"] == BOT and first_marker(c["body"], "limit")]


def test_requester_over_the_limit_is_answered_once_and_runs_after_the_window(
    harness: Any, local_github: Any
) -> None:
    h = harness(
        scenario(issues=[issue(1, [said("alice", "@tusk-bot fix it")])]),
        limited(runs_per_requester=2),
    )
    seed_run(local_github, "old-1", requester="alice")
    seed_run(local_github, "old-2", requester="alice")
    seed_run(local_github, "other", requester="bob")  # not alice's: does not count for her

    state, report = h.poller.cycle(PollState())
    assert h.sent().tasks == [], report.lines()
    [reply] = replies(local_github, 1)
    assert "`limits.runs_per_requester` is reached for requester alice" in reply["body"]
    assert "2 run(s) in the last 24 h" in reply["body"]
    assert "resets at 2026-01-02 00:00 UTC" in reply["body"]
    assert "waits" in reply["body"] and "@alice" not in reply["body"]
    assert any("runs_per_requester" in line for line in report.lines())
    assert report.left_unread, "a waiting mention keeps its thread unread"
    assert report.left_unread[0].endswith(
        ": its mention waits or failed (above); the next poll sees it again"
    )

    local_github.advance(3600)
    state, report = h.poller.cycle(state)  # still inside the window: no second reply
    assert h.sent().tasks == [] and len(replies(local_github, 1)) == 1, report.lines()

    local_github.advance(DAY)
    state, report = h.poller.cycle(state)
    assert [doc.actor for doc in h.sent().tasks] == ["alice"], report.lines()
    assert not report.left_unread


def test_daily_budget_counts_every_requester_and_frees_up_as_spend_leaves_the_window(
    harness: Any, local_github: Any
) -> None:
    h = harness(
        scenario(issues=[issue(1, [said("bob", "@tusk-bot look")])]), limited(daily_budget_usd=20.0)
    )
    seed_run(local_github, "spent-1", requester="alice", cost=14.5)
    local_github.advance(6 * 3600)
    seed_run(local_github, "spent-2", requester="carol", cost=5.75)

    state, report = h.poller.cycle(PollState())
    assert h.sent().tasks == [], report.lines()
    [reply] = replies(local_github, 1)
    assert "`limits.daily_budget_usd` is reached for all runs: $20.25" in reply["body"]

    local_github.advance(19 * 3600)  # the $14.50 run has left the window; $5.75 remain
    state, report = h.poller.cycle(state)
    assert [doc.actor for doc in h.sent().tasks] == ["bob"], report.lines()


def test_dropped_mention_is_answered_and_marked_read(harness: Any, local_github: Any) -> None:
    h = harness(
        scenario(issues=[issue(1, [said("alice", "@tusk-bot fix it")])]),
        limited(runs_per_repository=1, over_limit="drop"),
    )
    seed_run(local_github, "old", requester="bob")
    state, report = h.poller.cycle(PollState())
    [reply] = replies(local_github, 1)
    assert "`limits.runs_per_repository` is reached for repository alice/widgets" in reply["body"]
    assert "dropped" in reply["body"]
    assert not report.left_unread and report.marked_read
    local_github.advance(2 * DAY)
    state, report = h.poller.cycle(state)
    assert h.sent().tasks == [], report.lines()


def test_one_cycle_counts_its_own_dispatches(harness: Any, local_github: Any) -> None:
    issues = [issue(n, [said("alice", f"@tusk-bot task {n}")]) for n in (1, 2, 3)]
    h = harness(scenario(issues=issues), limited(runs_per_requester=2))
    _, report = h.poller.cycle(PollState())
    assert len(h.sent().tasks) == 2, report.lines()
    answered = [n for n in (1, 2, 3) if replies(local_github, n)]
    assert len(answered) == 1 and len(report.over_limit) == 1


def test_limits_off_read_no_log_issue(harness: Any, local_github: Any) -> None:
    h = harness(scenario(issues=[issue(1, [said("alice", "@tusk-bot fix it")])]), limited())
    h.poller.cycle(PollState())
    assert len(h.sent().tasks) == 1
    journal = local_github.journal()
    log_listings = [
        e
        for e in journal
        if e["path"] == f"/repos/{CONTROL}/issues" and e["query"].get("labels") == "workflow"
    ]
    assert any(e["path"] == f"/repos/{CONTROL}/issues" for e in journal)  # the blocklist's
    assert log_listings == []


def test_read_runs_trusts_only_the_bots_and_skips_go_away_logs(local_github: Any) -> None:
    local_github.load(scenario())
    seed_run(local_github, "run-1", requester="alice", cost=1.25)
    bot = local_github.gateway("agent")
    go_away = render_marker("job", {"jobid": "go-away-1", "repo": REPO})
    bot.post(
        f"/repos/{CONTROL}/issues",
        json={"title": "go away", "body": go_away, "labels": ["workflow"]},
    )
    # Someone else's comment with a progress and usage marker on the run's log issue
    # does not count: only the bot's progress comments carry the spend.
    fake = render_marker("progress", {"jobid": "run-1", "nonce": "x"}) + usage_marker(-1 + 99.0)
    local_github.gateway("alice").post(f"/repos/{CONTROL}/issues/1/comments", json={"body": fake})
    runs = read_runs(bot, SETTINGS, now=bot.server_time)
    assert [(r.jobid, r.requester, r.cost_usd) for r in runs] == [("run-1", "alice", 1.25)]


def run_metadata(doc: Any, log_issue: int) -> RunMetadata:
    return RunMetadata(
        jobid=doc.jobid,
        repo=doc.repo,
        trigger_url=doc.trigger.url,
        trigger_type=doc.trigger.type,
        thread_number=doc.trigger.number,
        log_issue_number=log_issue,
        log_issue_url=f"https://github.com/{CONTROL}/issues/{log_issue}",
        control_repo=CONTROL,
        task_path="task.md",
        context_path="context.md",
        context_file="context.json",
    )


def test_two_pollers_never_start_more_runs_than_the_limit(harness: Any, local_github: Any) -> None:
    """Poller A dispatches two of alice's mentions; poller B, before their log issues exist,
    dispatches a third. The claims order the three runs, and run-claude's re-check lets
    exactly the first two start."""
    settings = limited(runs_per_requester=2)
    a = harness(
        scenario(issues=[issue(n, [said("alice", f"@tusk-bot task {n}")]) for n in (1, 2)]),
        settings,
    )
    a.poller.cycle(PollState())
    alice = local_github.gateway("alice")
    alice.post(f"/repos/{REPO}/issues", json={"title": "Issue 3", "body": "@tusk-bot task 3"})
    b = make_poller(local_github, settings)  # its own process: none of A's memory
    b.poller.cycle(PollState())
    docs = {doc.trigger.number: doc for doc in b.sent().tasks}
    assert sorted(docs) == [1, 2, 3], "both pollers dispatched: the logs did not exist yet"

    agent = local_github.gateway("agent")
    claims = {n: seed_run(local_github, docs[n].jobid, requester="alice") for n in (1, 2, 3)}
    outcomes = {
        n: over_limit(agent, settings, run_metadata(docs[n], claims[n]), docs[n]) for n in (1, 2, 3)
    }
    assert outcomes[1] is None and outcomes[2] is None
    assert outcomes[3] is not None and outcomes[3].kind == "over_limit"
    assert outcomes[3].closes_as == "not_planned"
    assert "runs_per_requester" in outcomes[3].detail
    [reply] = replies(local_github, 3)
    assert "dropped" in reply["body"]
    # Checking again (a re-run of the step) does not answer twice.
    again = over_limit(agent, settings, run_metadata(docs[3], claims[3]), docs[3])
    assert again is not None and len(replies(local_github, 3)) == 1
    assert replies(local_github, 1) == [] and replies(local_github, 2) == []


def test_a_discussion_mention_over_a_limit_is_answered_in_the_discussion(
    harness: Any, local_github: Any
) -> None:
    discussion = {
        "number": 5,
        "author": "alice",
        "title": "Ideas",
        "body": "Plans",
        "category": "Ideas",
        "comments": [{"author": "alice", "body": "@tusk-bot draft it"}],
    }
    h = harness(scenario(discussions=[discussion]), limited(runs_per_requester=0))
    _, report = h.poller.cycle(PollState())
    assert h.sent().tasks == [] and len(report.over_limit) == 1, report.lines()
    assert "answered on the thread" in report.over_limit[0]
    posted = [
        e
        for e in local_github.journal()
        if e["path"] == "/graphql" and "addDiscussionComment" in str(e["body"])
    ]
    [reply] = posted
    assert "`limits.runs_per_requester` is reached" in reply["body"]["variables"]["body"]
    assert "it is set to 0, so it never resets" in reply["body"]["variables"]["body"]
