"""The run's status comment on its thread: queued, working, the outcome (feedback.thread_status)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tusk.contracts.config import Settings
from tusk.contracts.models import RunMetadata
from tusk.contracts.pricing import Spend
from tusk.github.thread_status import Status, ThreadStatus, headline_of, render_status
from tusk.steps.run_claude import thread_status as run_status
from tusk.steps.run_claude.writeup.outcome import Outcome
from tusk.steps.run_claude.writeup.progress import ProgressReporter, Snapshot
from tusk.steps.run_claude.writeup.publish import WriteUpState
from tusk.text.markers import first_marker
from tusk.text.mentions import mentions_bot

REPO = "alice/widgets"
CONTROL = "alice/control"
LOG = f"https://github.com/{CONTROL}/issues/3"
BOT = "tusk-bot"
SETTINGS = Settings(bot=BOT, control_repo=CONTROL, allowed_users=("alice",))


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def gh(local_github: Any) -> Any:
    local_github.load(
        {
            "users": [{"login": "alice"}, {"login": BOT}],
            "tokens": {"agent": {"user": BOT, "scopes": ["repo"]}},
            "repos": [
                {
                    "name": REPO,
                    "collaborators": {BOT: "write"},
                    "issues": [{"number": 7, "author": "alice", "title": "Broken", "body": "x"}],
                },
                {
                    "name": CONTROL,
                    "collaborators": {BOT: "write"},
                    "issues": [{"number": 3, "author": BOT, "title": "[Agent Log] x"}],
                },
            ],
        }
    )
    return local_github


def status_comments(gh: Any) -> list[dict[str, Any]]:
    comments = gh.gateway("agent").paginate(f"/repos/{REPO}/issues/7/comments")
    return [c for c in comments if first_marker(c["body"], "status")]


def comment(gh: Any, clock: Clock, *, kind: str = "issue") -> ThreadStatus:
    return ThreadStatus(
        gh.gateway("agent"),
        repo=REPO,
        number=7,
        kind=kind,
        jobid="job-1",
        bot=BOT,
        go_away="go away",
        log_issue_url=LOG,
        clock=clock,
    )


def test_the_status_says_each_state_and_mentions_nobody() -> None:
    working = Status("working", "Main session", 4, 1, 0, "$0.0100 of $5.00", 2)
    done = Status(
        "done",
        "Self-check 1",
        9,
        2,
        1,
        "$0.30 of $5.00",
        headline="Completed",
        ok=True,
        links=(("pull_request", "https://github.com/alice/widgets/pull/9"),),
    )
    bodies = {
        s.phase: render_status(
            s, jobid="j", nonce="n", bot=BOT, go_away="go away", log_issue_url=LOG
        )
        for s in (Status("queued"), working, done)
    }
    assert "**Queued.**" in bodies["queued"]
    assert "writes so far: 1 · refused: 0 · pass: Main session\n" in bodies["working"]
    assert "tool calls" not in bodies["working"]  # they change while the agent only reads
    assert "pass: Self-check 1 · tool calls: 9 · writes: 2 · refused: 1" in bodies["done"]
    assert "✅ **Done: Completed**" in bodies["done"]
    assert "- pull request: https://github.com/alice/widgets/pull/9" in bodies["done"]
    for body in bodies.values():
        assert not mentions_bot(body, BOT)
        visible = re.sub(r"<!--.*?-->", "", body)
        assert CONTROL not in visible  # nothing links into the control repository
        assert first_marker(body, "backlink") == {"jobid": "j", "log": LOG, "nonce": "n"}
        assert "`@tusk-bot go away`" in body


def test_one_comment_edited_at_most_every_30_seconds_the_outcome_always(gh: Any) -> None:
    clock = Clock()
    status = comment(gh, clock)
    assert status.show(Status("queued")) is True
    [queued] = status_comments(gh)
    assert "**Queued.**" in queued["body"] and queued["user"]["login"] == BOT
    clock.now += 10
    assert status.show(Status("working", "Main session", 1)) is False  # 10 s later: held
    clock.now += 20
    assert status.show(Status("working", "Main session", 2)) is True
    clock.now += 1
    assert status.show(Status("done", headline="Completed", ok=True)) is True  # never held
    [final] = status_comments(gh)
    assert final["id"] == queued["id"] and "Done: Completed" in final["body"]
    patches = [
        e for e in gh.journal() if e["method"] == "PATCH" and "/issues/comments/" in e["path"]
    ]
    assert len(patches) == 2


def test_another_step_finds_the_comment_instead_of_adding_one(gh: Any) -> None:
    comment(gh, Clock()).show(Status("queued"))  # build-context
    comment(gh, Clock()).show(Status("working", "Main session", 3, 2))  # run-claude, later
    [only] = status_comments(gh)
    assert "writes so far: 2" in only["body"]


def test_a_discussion_keeps_only_its_reactions(gh: Any) -> None:
    assert comment(gh, Clock(), kind="discussion").show(Status("queued")) is False
    assert status_comments(gh) == []


def test_the_progress_reporter_mirrors_each_edit_on_the_thread(gh: Any, tmp_path: Path) -> None:
    gateway = gh.gateway("agent")
    progress = gateway.post(f"/repos/{CONTROL}/issues/3/comments", json={"body": "started"}).body
    seen: list[Snapshot] = []
    clock = Clock()
    reporter = ProgressReporter(
        gateway,
        repo=CONTROL,
        comment_id=progress["id"],
        run_dir=tmp_path,
        spend=lambda: Spend(requests=1, cost_usd=0.01, budget_usd=5.0),
        clock=clock,
        mirror=seen.append,
    )
    assert reporter.tick() is True and len(seen) == 1
    clock.now += 5
    assert reporter.tick() is False and len(seen) == 1  # no edit, no mirror
    reporter.stop("✅ Completed.")
    assert len(seen) == 1  # the outcome comes from the write-up, with its links


def run_metadata() -> RunMetadata:
    return RunMetadata(
        jobid="job-1",
        repo=REPO,
        trigger_url=f"https://github.com/{REPO}/issues/7#issuecomment-1",
        trigger_type="issue_comment",
        thread_number=7,
        log_issue_number=3,
        log_issue_url=LOG,
        control_repo=CONTROL,
        task_path="task.md",
        context_path="context.md",
        context_file="context.json",
    )


def test_the_run_shows_working_then_its_outcome(gh: Any, tmp_path: Path) -> None:
    gateway = gh.gateway("agent")
    clock = Clock()
    mirror = run_status.mirror(gateway, SETTINGS, run_metadata(), clock)
    assert mirror is not None
    [started] = status_comments(gh)  # shown before the agent starts
    assert "⚙️ **Working.**" in started["body"] and "writes so far: 0" in started["body"]
    edits = len([e for e in gh.journal() if e["method"] == "PATCH"])
    mirror(Snapshot("Main session", 5, 0, 0, 0, "$0.02 of $5.00", 1))  # only reads so far
    assert len([e for e in gh.journal() if e["method"] == "PATCH"]) == edits  # no edit
    clock.now += 30
    mirror(Snapshot("Main session", 6, 1, 0, 0, "$0.02 of $5.00", 1))  # a write
    [working] = status_comments(gh)
    assert "writes so far: 1 · refused: 0 · pass: Main session" in working["body"]
    state = WriteUpState(
        run=run_metadata(),
        bot=BOT,
        bug_label="bug",
        outcome=Outcome(kind="completed", headline="Completed"),
        spend=Spend(requests=2, cost_usd=0.25, budget_usd=5.0),
    )
    from tusk.contracts.config import Secrets

    secrets = Secrets(agent_token="agent", github_api_url=gh.url)
    # The run pushed a branch: the MCP server's audit and its diff summary of it.
    from tusk.audit.chain import AuditLog

    branch = "https://github.com/tusk-bot/widgets/tree/fix-typo"
    AuditLog(tmp_path / "audit.jsonl").append(
        tool="push_branch",
        kind="write",
        target="alice/widgets",
        args={"branch": "fix-typo"},
        decision="allowed",
        url=branch,
        created="branch",
    )
    (tmp_path / "pushes.jsonl").write_text(
        f'{{"branch":"fix-typo","url":"{branch}","files":1,"additions":1,"deletions":1}}\n'
    )
    run_status.conclude(secrets, SETTINGS, state, tmp_path)
    [done] = status_comments(gh)
    assert done["id"] == working["id"]
    assert "✅ **Done: Completed**" in done["body"] and "$0.2500 of $5.00" in done["body"]
    assert f"- branch (1 file(s), +1 −1): {branch}" in done["body"]


def test_off_means_no_status_comment(gh: Any, tmp_path: Path) -> None:
    off = SETTINGS.model_copy(
        update={"feedback": SETTINGS.feedback.model_copy(update={"thread_status": False})}
    )
    assert run_status.mirror(gh.gateway("agent"), off, run_metadata()) is None
    state = WriteUpState(
        run=run_metadata(),
        bot=BOT,
        bug_label="bug",
        outcome=Outcome(kind="completed", headline="Completed"),
    )
    from tusk.contracts.config import Secrets

    run_status.conclude(Secrets(agent_token="agent", github_api_url=gh.url), off, state, tmp_path)
    assert status_comments(gh) == []


def test_headline_of_tells_a_status_body_and_its_facts() -> None:
    working = Status("working", "Main session", 4, 1, 0, "$0.01 of $5.00", 2)
    body = render_status(
        working, jobid="j", nonce="n", bot=BOT, go_away="go away", log_issue_url=LOG
    )
    assert headline_of(body) == "⚙️ **Working.** writes so far: 1 · refused: 0 · pass: Main session"
    assert headline_of("⏳ Queued.\nsomething") is None  # no status marker: not a status


def test_the_status_shows_the_runs_budget_and_warns_once_when_most_is_spent(
    gh: Any, tmp_path: Path
) -> None:
    settings = SETTINGS.model_copy(
        update={"agent": SETTINGS.agent.model_copy(update={"max_budget_usd": 0.5})}
    )
    clock = Clock()
    mirror = run_status.mirror(gh.gateway("agent"), settings, run_metadata(), clock)
    assert mirror is not None
    [started] = status_comments(gh)
    assert "budget: $0.50" in started["body"] and "⚠️" not in started["body"]

    def patches() -> int:
        return len([e for e in gh.journal() if e["method"] == "PATCH"])

    def snap(cost: float) -> Snapshot:
        return Snapshot("Main session", 3, 0, 0, 0, f"${cost} of $0.50", 1, cost, 0.5)

    clock.now += 30
    mirror(snap(0.2))  # 40 %: nothing the thread needs to see
    assert patches() == 0
    mirror(snap(0.41))  # 82 %: said once
    [warned] = status_comments(gh)
    assert "⚠️ This run has used 82% of its budget ($0.4100 of $0.5000)" in warned["body"]
    edits = patches()
    clock.now += 60
    mirror(snap(0.45))  # still over: not said again
    assert patches() == edits


def test_the_status_follows_the_conversation_and_links_nothing_in_the_control_repo() -> None:
    history = f"https://github.com/{CONTROL}/issues/3#issuecomment-5"
    pull = "https://github.com/alice/widgets/pull/9"
    done = Status(
        "done",
        headline="Completed",
        ok=True,
        followups=2,
        links=(("history", history), ("memory", history), ("pull_request", pull)),
    )
    body = render_status(done, jobid="j", nonce="n", bot=BOT, go_away="go away", log_issue_url=LOG)
    visible = re.sub(r"<!--.*?-->", "", body)
    assert CONTROL not in visible and f"- pull request: {pull}" in visible
    assert "follow-ups delivered: 2" in visible
    working = Status("working", "Main session", followups=1)
    body = render_status(
        working, jobid="j", nonce="n", bot=BOT, go_away="go away", log_issue_url=LOG
    )
    assert "follow-ups delivered: 1" in body
    stopped = Status("done", headline="Stopped", stopped_by="by bob on the thread (write access)")
    body = render_status(
        stopped, jobid="j", nonce="n", bot=BOT, go_away="go away", log_issue_url=LOG
    )
    assert "🛑 **Stopped** by bob on the thread (write access)." in body and "Done" not in body
    staged = Status("done", headline="Completed", ok=True, approval=True)
    body = render_status(
        staged, jobid="j", nonce="n", bot=BOT, go_away="go away", log_issue_url=LOG
    )
    assert "Waiting for approval" in body and "Done" not in body
