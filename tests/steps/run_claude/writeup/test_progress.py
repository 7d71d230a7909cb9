"""The progress comment: updated at most every 30 s and only when something changed,
its hidden marker kept, its counts read from the run folder as they grow."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tusk.contracts.pricing import Spend
from tusk.issues.usage import spend_of
from tusk.steps.run_claude.writeup.progress import (
    ProgressReporter,
    Snapshot,
    Tally,
    render_progress,
    snapshot,
)
from tusk.text.markers import first_marker

CONTROL = "alice/control"
MARKER = '<!-- tusk:progress {"jobid":"alice-widgets-1","nonce":"n1"} -->'


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def append(path: Path, *items: dict[str, Any], partial: str = "") -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(item) + "\n" for item in items) + partial)


def assistant_calls(count: int) -> dict[str, Any]:
    content = [
        {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {}} for i in range(count)
    ]
    return {"type": "assistant", "message": {"content": content}}


def test_the_tally_reads_only_whole_new_lines(tmp_path: Path) -> None:
    events, audit = tmp_path / "events.jsonl", tmp_path / "audit.jsonl"
    tally = Tally(events, audit)
    tally.update()  # neither file exists yet
    append(events, {"type": "tusk", "subtype": "pass", "name": "Main session"}, assistant_calls(2))
    append(
        audit, {"decision": "allowed", "kind": "write"}, {"decision": "refused", "kind": "write"}
    )
    append(audit, {"decision": "allowed", "kind": "read"}, partial='{"decision": "refu')
    tally.update()
    assert (tally.pass_name, tally.tool_calls, tally.writes, tally.refused) == (
        "Main session",
        2,
        1,
        1,
    )
    append(audit, {}, partial="")  # completes nothing new except an empty record
    with audit.open("a") as handle:
        handle.write('sed", "kind": "write"}\n')
    tally.update()
    assert tally.refused == 1  # the half line was dropped when it was read whole later


def test_the_comment_shows_pass_calls_writes_refusals_cost_and_time() -> None:
    snap = Snapshot("Self-check 2", 14, 2, 1, 0, "$0.0312 of $5.00", 3)
    text = render_progress(snap, now=datetime(2026, 12, 1, 4, 5, 6, tzinfo=UTC))
    assert "updated at most every 30 s; last update 2026-12-01 04:05:06 UTC" in text
    assert "| Self-check 2 | 14 | 2 | 1 | $0.0312 of $5.00 | 3 min |" in text
    final = render_progress(snap, now=datetime(2026, 12, 1, tzinfo=UTC), final="✅ Completed.")
    assert final.startswith("✅ Completed. The write-up follows below.")
    spend = Spend(requests=3, cost_usd=0.5, budget_usd=2.0)
    assert snapshot(Tally(Path("x"), Path("y")), spend, 125.0).cost == "$0.5000 of $2.00"


def test_the_comment_carries_the_spend_for_the_limits_across_runs() -> None:
    spend = Spend(requests=3, cost_usd=0.4321, budget_usd=2.0)
    snap = snapshot(Tally(Path("x"), Path("y")), spend, 10.0)
    text = render_progress(snap, now=datetime(2026, 12, 1, tzinfo=UTC))
    # The budget too: held against the requester's cap until the run says it is done.
    assert first_marker(text, "usage") == {"cost_usd": 0.4321, "budget_usd": 2.0}
    final = render_progress(snap, now=datetime(2026, 12, 1, tzinfo=UTC), final="Done.")
    assert first_marker(final, "usage") == {"cost_usd": 0.4321, "budget_usd": 2.0, "done": True}
    comment = {"user": {"login": "bot"}, "body": f'<!-- tusk:progress {{"jobid": "j"}} -->\n{text}'}
    assert spend_of(iter([comment]), bot="bot", jobid="j") == 0.4321
    assert spend_of(iter([comment]), bot="bot", jobid="other") == 0.0
    unmetered = render_progress(
        snapshot(Tally(Path("x"), Path("y")), None, 1.0), now=datetime(2026, 12, 1, tzinfo=UTC)
    )
    assert first_marker(unmetered, "usage") is None


def test_edits_at_most_every_30_seconds_and_only_on_change(
    local_github: Any, tmp_path: Path
) -> None:
    local_github.load(
        {
            "users": [{"login": "alice"}, {"login": "tusk-bot"}],
            "tokens": {"agent": {"user": "tusk-bot", "scopes": ["repo"]}},
            "repos": [
                {
                    "name": CONTROL,
                    "collaborators": {"tusk-bot": "write"},
                    "issues": [{"number": 3, "author": "tusk-bot", "title": "[Agent Log] x"}],
                }
            ],
        }
    )
    gateway = local_github.gateway("agent")
    comment = gateway.post(
        f"/repos/{CONTROL}/issues/3/comments", json={"body": f"{MARKER}\n⏳ started"}
    ).body
    clock = Clock()
    reporter = ProgressReporter(
        gateway,
        repo=CONTROL,
        comment_id=comment["id"],
        run_dir=tmp_path,
        spend=lambda: Spend(requests=1, cost_usd=0.01, budget_usd=5.0),
        clock=clock,
        wall=lambda: datetime(2026, 12, 1, 4, 0, tzinfo=UTC),
    )
    events = tmp_path / "events.jsonl"

    def body() -> str:
        return str(gateway.get(f"/repos/{CONTROL}/issues/comments/{comment['id']}")["body"])

    append(events, {"type": "tusk", "subtype": "pass", "name": "Main session"})
    assert reporter.tick() is True  # the first look always shows
    assert body().startswith(MARKER + "\n⏳ **The agent is working.**")
    clock.now += 30
    assert reporter.tick() is False  # due, but nothing changed: no edit
    append(events, assistant_calls(3))
    clock.now += 1
    assert reporter.tick() is True
    assert "| Main session | 3 | 0 | 0 | $0.0100 of $5.00 | 0 min |" in body()
    append(events, assistant_calls(1))
    clock.now += 10
    assert reporter.tick() is False  # changed, but only 10 s after the last edit
    clock.now += 20
    assert reporter.tick() is True
    assert "| Main session | 4 | 0 | 0 | $0.0100 of $5.00 | 1 min |" in body()
    reporter.stop("✅ Completed.")  # the last word is never held back
    assert body().startswith(MARKER + "\n✅ Completed. The write-up follows below.")
    assert reporter.edits == 4
    patches = [e for e in local_github.journal() if e["method"] == "PATCH"]
    assert len(patches) == 4
