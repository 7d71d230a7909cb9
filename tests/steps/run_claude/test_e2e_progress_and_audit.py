"""End to end: the run's progress comment ends with its outcome, its audit records
are on the log issue and verify from there, and the mention gets 🚀."""

from __future__ import annotations

from typing import Any

import pytest
from test_e2e import CONFIRM, GH, history_conversation, tool

from tests.steps.run_claude.conftest import AGENT_TOKEN, E2E
from tusk.audit.on_issue import verify_comments
from tusk.text.markers import first_marker

pytestmark = pytest.mark.e2e


def test_progress_audit_and_reaction_of_a_completed_run(e2e: E2E) -> None:
    gateway = e2e.github.gateway(AGENT_TOKEN)
    trigger = gateway.get("/repos/alice/widgets/issues/1/comments")[0]
    script = {
        "steps": [
            tool(f"{GH}create_comment", repo="alice/widgets", number=1, body="On it."),
            {"text": "Commented."},
        ],
        "conversations": [CONFIRM, history_conversation()],
    }
    original = e2e.inputs

    def inputs(model_url: str, **overrides: Any) -> Any:
        """The harness's inputs, with the trigger pointing at the real mention."""
        built = original(model_url, **overrides)
        doc_path = built.resolve(built.run.context_file)
        text = doc_path.read_text().replace('"id":"1"', f'"id":"{trigger["id"]}"')
        doc_path.write_text(text)
        return built

    e2e.inputs = inputs  # type: ignore[method-assign]
    result = e2e.run(script)
    assert result.outcome.ok, result.outcome

    comments = list(gateway.paginate("/repos/alice/tusk-control/issues/1/comments"))
    progress = [c for c in comments if first_marker(c["body"], "progress")]
    assert len(progress) == 1
    body = progress[0]["body"]
    assert "✅ Completed. The write-up follows below." in body
    assert "| pass | tool calls | writes | refused | model cost so far | time |" in body
    found, verdict = verify_comments(comments)
    assert verdict.ok, verdict.message
    assert found is not None and verdict.records >= 2  # the comment and the history entry
    reactions = gateway.get(f"/repos/alice/widgets/issues/comments/{trigger['id']}/reactions")
    assert [(r["user"]["login"], r["content"]) for r in reactions] == [("tusk-bot", "rocket")]
