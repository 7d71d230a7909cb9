"""End to end, ``@bot stop`` as the run sees it (MISSION C2): the bot's stop record on
the run's log issue ends the session within the check interval; the MCP server
refuses every write from then on; what was pushed and posted stays; the log issue
closes as completed, saying who stopped it; the bot stays allowed."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from tests.steps.run_claude.conftest import AGENT_TOKEN, E2E
from tests.steps.run_claude.test_e2e import CONFIRM, GH, history_conversation, tool
from tusk.contracts.config import load_settings
from tusk.issues import stop_record
from tusk.issues.state import StateStore

pytestmark = pytest.mark.e2e

CONTROL = "alice/tusk-control"
STOP = stop_record.StopRecord(
    actor="alice",
    url="https://github.example/alice/widgets/issues/1#issuecomment-90",
    why="alice asked for this run",
)


def script(first: str) -> dict:
    return {
        "steps": [
            tool(
                "Bash",
                command="sed -i 's/smal/small/' README.md && git checkout -q -b tusk/fix-typo"
                " && git commit -qam 'Fix typo' && git log --oneline -1",
            ),
            tool(f"{GH}push_branch", branch="tusk/fix-typo"),
            tool(f"{GH}create_comment", repo="alice/widgets", number=1, body=first),
            {"stall": 20},  # the stop lands meanwhile; the session never gets this answer
            tool(f"{GH}create_comment", repo="alice/widgets", number=1, body="Fixed it."),
            {"text": "Done."},
        ],
        "conversations": [CONFIRM, history_conversation()],
    }


def after_first_comment(e2e: E2E, first: str, act: Callable[[], object]) -> threading.Thread:
    def watch() -> None:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if any(first in c["body"] for c in e2e.issue_comments("alice/widgets", 1)):
                act()
                return
            time.sleep(0.05)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_a_recorded_stop_ends_the_run_keeps_its_work_and_the_bot(e2e: E2E) -> None:
    e2e.config = {"limits": {"blocklist_check_seconds": 0}}
    first = "Looking into it."
    gateway = e2e.github.gateway(AGENT_TOKEN)
    watcher = after_first_comment(
        e2e,
        first,
        lambda: stop_record.record(
            gateway, control_repo=CONTROL, log_issue=1, stop=STOP, bot="tusk-bot"
        ),
    )
    result = e2e.run(script(first))
    watcher.join(timeout=5)
    assert result.outcome.kind == "stopped", result.outcome
    assert result.ok
    bodies = [c["body"] for c in e2e.issue_comments("alice/widgets", 1)]
    assert any(first in b for b in bodies) and not any("Fixed it." in b for b in bodies)
    assert "tusk/fix-typo" in e2e.github.state()["repos"]["tusk-bot/widgets"]["branches"]
    issue = e2e.log_issue()
    assert issue["state"] == "closed" and issue["state_reason"] == "completed"
    assert "bug" not in [label["name"] for label in issue["labels"]]
    summary = e2e.log_comments()[0]
    assert "⏹️ Stopped on the thread" in summary and "stopped by alice" in summary
    assert "❌" not in summary.split("\n", 1)[0]  # a stop is a person's call, not a failure
    assert "Self-check" not in "\n".join(e2e.log_comments())
    status = e2e.status_comment("alice/widgets", 1)
    assert status is not None and "🛑 **Stopped** by alice on the thread" in status
    assert "Done" not in status
    settings = load_settings(e2e.tmp / "tusk.yml")
    blocklist = StateStore(gateway, settings).read_blocklist()
    assert not blocklist.blocks("alice/widgets") and not blocklist.blocks_user("alice")


def test_a_stop_typed_on_the_log_issue_by_someone_else_ends_nothing(e2e: E2E) -> None:
    e2e.config = {"limits": {"blocklist_check_seconds": 0}}
    forged = stop_record.body(STOP)
    e2e.github.gateway("alice").post(f"/repos/{CONTROL}/issues/1/comments", json={"body": forged})
    result = e2e.run(
        {
            "steps": [
                tool(f"{GH}create_comment", repo="alice/widgets", number=1, body="Fixed it."),
                {"expect": {"last_tool_result_is_error": False}},
                {"text": "Done."},
            ],
            "conversations": [CONFIRM, history_conversation()],
        }
    )
    assert result.outcome.kind == "completed", result.outcome
    bodies = [c["body"] for c in e2e.issue_comments("alice/widgets", 1)]
    assert any("Fixed it." in b for b in bodies)
