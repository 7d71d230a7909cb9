"""The platform as users run it: the demo's mention becomes a traced agent run
through the real agent workflow under act, judged by the local GitHub's state."""

from __future__ import annotations

from pathlib import Path

import pytest

from tusk.demo import BOT, DEMO_REPO, play_offline


@pytest.mark.act
@pytest.mark.e2e
def test_demo_turns_the_mention_into_a_completed_traced_run(tmp_path: Path) -> None:
    code, outcome = play_offline(tmp_path)

    assert outcome is not None
    assert outcome.problems() == []
    assert code == 0
    log = outcome.log_issue
    assert log is not None
    assert log["title"].startswith(f"[Agent Log] {DEMO_REPO} #1 — ")
    assert (log["state"], log["state_reason"]) == ("closed", "completed")
    assert [label["name"] for label in log["labels"]] == ["workflow"]
    assert log["body"].index("# Task") < log["body"].index("# Context")
    # A8: the summary links what the agent created; the transcript follows it.
    summary = outcome.log_comments[0]["body"]
    pull = outcome.pull_requests[0]
    assert pull["html_url"] in summary
    assert outcome.agent_comments[0]["html_url"] in summary
    assert any("Transcript" in comment["body"] for comment in outcome.log_comments[1:])
    # The agent's work: a fix pushed from the bot's fork, and a comment stamped with the backlink.
    assert pull["head"]["label"] == f"{BOT}:tusk/fix-readme-typo"
    assert pull["head"]["repo"]["full_name"] == f"{BOT}/widgets"
    assert log["html_url"] in outcome.agent_comments[0]["body"]
    assert f"@{BOT} go away" in outcome.agent_comments[0]["body"]
