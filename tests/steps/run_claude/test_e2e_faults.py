"""End to end under GitHub's faults: every create of a whole agent run (the progress
report, the agent's comment and pull request, the history entry, each write-up comment)
lands although its answer is lost, and the run still ends in exactly one of each, the
log issue closed as completed: one completed run, never zero, never two."""

from __future__ import annotations

from typing import Any

import pytest

from tests.steps.run_claude.conftest import E2E
from tests.steps.run_claude.test_e2e import CONFIRM, GH, history_conversation, tool

pytestmark = pytest.mark.e2e

CONTROL_COMMENTS = r"^/repos/alice/tusk-control/issues/\d+/comments$"


def test_a_run_whose_every_create_loses_its_answer_still_ends_once(e2e: E2E) -> None:
    github = e2e.github
    # Each create lands, then its answer is lost: a 502, a reset, a 502 again...
    github.add_fault("POST", CONTROL_COMMENTS, status=502, lands=True, count=4)
    github.add_fault("POST", r"^/repos/alice/widgets/issues/1/comments$", drop=True, lands=True)
    github.add_fault("POST", r"^/repos/alice/widgets/pulls$", status=502, lands=True)
    script: dict[str, Any] = {
        "steps": [
            tool(
                "Bash",
                command="sed -i 's/smal/small/' README.md && git checkout -q -b tusk/fix-typo"
                " && git commit -qam 'Fix typo'",
            ),
            tool(f"{GH}push_branch", branch="tusk/fix-typo"),
            tool(
                f"{GH}create_pull_request",
                repo="alice/widgets",
                title="Fix typo in README",
                body="Fixes #1",
                head="tusk-bot:tusk/fix-typo",
                base="main",
            ),
            {"expect": {"last_tool_result_is_error": False}},
            tool(f"{GH}create_comment", repo="alice/widgets", number=1, body="Opened a PR."),
            {"expect": {"last_tool_result_is_error": False}},
            {"text": "Done."},
        ],
        "conversations": [CONFIRM, history_conversation()],
    }
    result = e2e.run(script)
    assert result.outcome.kind == "completed" and result.ok, result
    issue = e2e.log_issue()
    assert (issue["state"], issue["state_reason"]) == ("closed", "completed")
    parts = [key for key, _ in e2e.log_parts()]
    assert parts.count(None) == 1  # the progress report, once
    assert parts.count("summary-1") == 1 and parts.count("transcript-1") == 1
    assert len(parts) == len(set(parts))  # no part twice
    mine = [c for c in e2e.issue_comments("alice/widgets", 1) if c["user"]["login"] == "tusk-bot"]
    assert len(mine) == 1 and mine[0]["body"].startswith("Opened a PR.")
    pulls = github.gateway("alice").get("/repos/alice/widgets/pulls", params={"state": "all"})
    assert [p["title"] for p in pulls] == ["Fix typo in README"]
    assert e2e.state_entries("history") == ["Fixed the README typo for alice/widgets#1."]
    assert not [f for f in github._admin("GET", "faults") if f["count"]]  # every fault hit
