"""Limits across runs against the local GitHub: the poller counts the log issues, answers a
mention over a limit on its thread, and lets it through once the window has moved on."""

from __future__ import annotations

from typing import Any

from poller_helpers import BOT, CONTROL, REPO, SETTINGS, issue, make_poller, said, scenario

from tusk.contracts.config import Settings
from tusk.contracts.models import RunMetadata
from tusk.contracts.run_limits import run_limits
from tusk.issues.usage import read_runs, usage_marker
from tusk.poller.core import PollState
from tusk.steps.run_claude.limits_check import check, over_limit
from tusk.text.markers import first_marker, render_marker

DAY = 24 * 3600


def limited(**limits: Any) -> Settings:
    base = {
        "daily_budget_usd": None,
        "runs_per_requester": None,
        "requester_budget_usd": None,
        "runs_per_repository": None,
    }
    return SETTINGS.model_copy(
        update={"limits": SETTINGS.limits.model_copy(update={**base, **limits})}
    )


def seed_run(
    github: Any,
    jobid: str,
    *,
    requester: str,
    cost: float = 0.0,
    repo: str = REPO,
    budget: float | None = None,
) -> int:
    """A run's log issue as build-context and run-claude leave it: the job marker with the
    requester (and the budget the mention allows), and the bot's progress comment with the
    spend so far."""
    agent = github.gateway("agent")
    data: dict[str, Any] = {"jobid": jobid, "repo": repo, "requester": requester}
    if budget is not None:
        data["budget_usd"] = budget
    marker = render_marker("job", data)
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
        if e["path"] == f"/repos/{CONTROL}/issues"
        and e["query"].get("labels") == "workflow"
        and "creator" not in e["query"]  # the run in flight on the thread (C1), not limits
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


def finish(github: Any, number: int, jobid: str, *, cost: float, budget: float) -> None:
    """The run ends: its progress comment says what it spent, and that it is done."""
    agent = github.gateway("agent")
    [comment] = list(agent.paginate(f"/repos/{CONTROL}/issues/{number}/comments"))
    progress = render_marker("progress", {"jobid": jobid, "nonce": "n"})
    agent.patch(
        f"/repos/{CONTROL}/issues/comments/{comment['id']}",
        json={"body": f"{progress}\n✅ done\n{usage_marker(cost, budget, done=True)}\n"},
    )


def test_concurrent_runs_of_one_requester_never_start_past_her_budget(
    harness: Any, local_github: Any
) -> None:
    """alice's cap is $8 and a run's budget $5. The poller dispatches her first two mentions
    (the first holds $5, $3 are left) but not the third; the re-checks give the first run
    $5 and the second $3, so together they can never spend more than $8. Once the first
    ends having spent $1, the third starts with the $4 left."""
    settings = limited(requester_budget_usd=8.0)
    assert settings.agent.max_budget_usd == 5.0
    h = harness(
        scenario(issues=[issue(n, [said("alice", f"@tusk-bot task {n}")]) for n in (1, 2, 3)]),
        settings,
    )
    state, report = h.poller.cycle(PollState())
    sent = h.sent().tasks  # in the order dispatched (the threads' order is GitHub's)
    assert len(sent) == 2, report.lines()
    [line] = report.over_limit
    assert "requester_budget_usd" in line
    [waiting] = {1, 2, 3} - {doc.trigger.number for doc in sent}
    [reply] = replies(local_github, waiting)
    assert "`limits.requester_budget_usd` is reached for requester alice: $8.00" in reply["body"]

    agent = local_github.gateway("agent")
    docs = dict(enumerate(sent, start=1))  # claimed in this order too
    claims = {n: seed_run(local_github, docs[n].jobid, requester="alice", budget=5.0) for n in docs}
    first = check(agent, settings, run_metadata(docs[1], claims[1]), docs[1])
    second = check(agent, settings, run_metadata(docs[2], claims[2]), docs[2])
    assert first.outcome is None and first.requester_left_usd == 8.0
    assert second.outcome is None and second.requester_left_usd == 3.0  # the first holds $5
    budgets = {
        n: run_limits(settings, docs[n].permission_config, requester_left_usd=left).budget_usd
        for n, left in ((1, first.requester_left_usd), (2, second.requester_left_usd))
    }
    assert budgets == {1: 5.0, 2: 3.0} and sum(budgets.values()) <= 8.0
    # The second run ends having spent nothing; its issue stays open (say, a bug label).
    finish(local_github, claims[2], docs[2].jobid, cost=0.0, budget=3.0)
    agent.get(f"/repos/{CONTROL}")  # GitHub's clock
    runs = read_runs(agent, settings, now=agent.server_time)
    assert {r.jobid: r.finished for r in runs} == {docs[1].jobid: False, docs[2].jobid: True}

    finish(local_github, claims[1], docs[1].jobid, cost=1.0, budget=5.0)
    local_github.advance(120)
    state, report = h.poller.cycle(state)
    [third] = [doc for doc in h.sent().tasks if doc.trigger.number == waiting]
    claim = seed_run(local_github, third.jobid, requester="alice", budget=5.0)
    again = check(agent, settings, run_metadata(third, claim), third)
    assert again.outcome is None and again.requester_left_usd == 7.0  # $8 - $1 spent - $0


def test_a_run_written_up_holds_only_what_it_spent_even_without_its_last_progress_edit(
    harness: Any, local_github: Any
) -> None:
    """Killed before its last progress edit, a run is written up by the clean-up step: its
    write-up says it ended, so it no longer holds its whole budget."""
    settings = limited(requester_budget_usd=8.0)
    harness(scenario(issues=[]), settings)
    number = seed_run(local_github, "killed", requester="alice", cost=0.25, budget=5.0)
    agent = local_github.gateway("agent")
    agent.get(f"/repos/{CONTROL}")  # GitHub's clock
    [running] = read_runs(agent, settings, now=agent.server_time)
    assert not running.finished
    part = render_marker("writeup", {"jobid": "killed", "part": "summary-1", "nonce": "n"})
    agent.post(f"/repos/{CONTROL}/issues/{number}/comments", json={"body": f"{part}\n## x"})
    [ended] = read_runs(agent, settings, now=agent.server_time)
    assert ended.finished and ended.cost_usd == 0.25
