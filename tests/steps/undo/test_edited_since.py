"""Which of a run's comments undo reports as edited after the run (pure)."""

from __future__ import annotations

from datetime import UTC, datetime

from tusk.steps.undo.take_back import edited_since
from tusk.text.markers import render_marker

RUN_ENDED = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
BACKLINK = render_marker("backlink", {"jobid": "job-1", "log": "https://example.test/1"})


def comment(body: str, *, updated: str) -> dict[str, str]:
    return {"body": body, "created_at": "2026-12-01T11:00:00Z", "updated_at": updated}


def test_an_agent_comment_changed_after_the_run_was_edited_since() -> None:
    assert edited_since(comment(f"Done.\n{BACKLINK}", updated="2026-12-01T13:00:00Z"), RUN_ENDED)


def test_an_agent_comment_untouched_since_the_run_was_not_edited() -> None:
    body = f"Done.\n{BACKLINK}"
    assert not edited_since(comment(body, updated="2026-12-01T11:30:00Z"), RUN_ENDED)


def test_the_status_comment_the_write_up_updates_is_never_reported_as_edited() -> None:
    """Tusk's own status comment carries the run's backlink too, and the write-up edits it
    after the run's last audit record: that is not a person's edit."""
    status = render_marker("status", {"jobid": "job-1"})
    body = f"{status}\n✅ Done.\n{BACKLINK}"
    assert not edited_since(comment(body, updated="2026-12-01T13:00:00Z"), RUN_ENDED)
