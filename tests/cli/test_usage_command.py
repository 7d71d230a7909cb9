"""``tusk usage``: spend and runs per day, requester and repository, from the log issues."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from tusk.cli.main import main as tusk_main
from tusk.cli.usage import report, rows, table
from tusk.contracts.config import Limits
from tusk.contracts.limits import RunRecord
from tusk.issues.usage import usage_marker
from tusk.text.markers import render_marker

CONTROL = "alice/control"
NOW = datetime(2026, 1, 3, 12, tzinfo=UTC)


def record(n: int, hours_ago: float, who: str, repo: str, cost: float) -> RunRecord:
    return RunRecord(f"job-{n}", NOW - timedelta(hours=hours_ago), who, repo, cost)


RECORDS = [
    record(1, 50, "alice", "alice/widgets", 1.5),
    record(2, 30, "bob", "alice/widgets", 0.25),
    record(3, 5, "alice", "bob/gadgets", 2.0),
    record(4, 1, "alice", "alice/widgets", 0.5),
    record(5, 24 * 9, "alice", "alice/widgets", 100.0),  # before the report's days
]


def test_the_report_groups_runs_and_spend_by_day_requester_and_repository() -> None:
    found = report(RECORDS, Limits(), now=NOW, days=7)
    assert (found.runs, found.spend_usd) == (4, 4.25)
    assert [(r.key, r.runs, r.spend_usd) for r in found.by_day] == [
        ("2026-01-01", 1, 1.5),
        ("2026-01-02", 1, 0.25),
        ("2026-01-03", 2, 2.5),
    ]
    assert [(r.key, r.runs, r.spend_usd) for r in found.by_requester] == [
        ("alice", 3, 4.0),
        ("bob", 1, 0.25),
    ]
    assert [(r.key, r.runs) for r in found.by_repository] == [
        ("alice/widgets", 3),
        ("bob/gadgets", 1),
    ]
    window = {s.limit: s for s in found.window}
    assert (
        window["daily_budget_usd"].used == "$2.50"
        and window["daily_budget_usd"].allowed == "$20.00"
    )
    assert (
        window["runs_per_requester"].used == "2 run(s)"
        and "alice" in window["runs_per_requester"].scope
    )
    text = table(found)
    assert "alice          3      $4.00" in text.splitlines()
    assert "daily_budget_usd: $2.50 of $20.00" in text


def test_the_report_shows_who_holds_the_most_of_the_requester_budget() -> None:
    in_flight = RunRecord("job-9", NOW - timedelta(hours=1), "bob", "a/w", 0.1, budget_usd=5.0)
    found = report([*RECORDS, in_flight], Limits(), now=NOW, days=7)
    window = {s.limit: s for s in found.window}
    held = window["requester_budget_usd"]
    # bob's run in flight holds its whole $5 budget; alice's ended runs hold their $2.50.
    assert (held.used, held.allowed) == ("$5.00", "$10.00 per requester")
    assert held.scope.startswith("bob, last 24 h")
    assert "requester_budget_usd: $5.00 of $10.00 per requester (bob" in table(found)


def test_rows_count_a_run_without_a_read_spend_as_free() -> None:
    [row] = rows([RunRecord("j", NOW, "carol", "c/r", None)], lambda r: r.requester or "?")
    assert (row.key, row.runs, row.spend_usd) == ("carol", 1, 0.0)


def test_tusk_usage_reads_the_log_issues(
    local_github: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    local_github.load(
        {
            "now": "2026-01-01T00:00:00Z",
            "users": [{"login": "alice"}, {"login": "tusk-bot"}],
            "tokens": {"agent": {"user": "tusk-bot", "scopes": ["repo"]}},
            "repos": [{"name": CONTROL, "private": True, "collaborators": {"tusk-bot": "write"}}],
        }
    )
    bot = local_github.gateway("agent")
    for jobid, who, cost in (("j1", "alice", 0.75), ("j2", "bob", 0.5), ("j3", "alice", 0.125)):
        marker = render_marker("job", {"jobid": jobid, "repo": "alice/widgets", "requester": who})
        issue = bot.post(
            f"/repos/{CONTROL}/issues",
            json={"title": jobid, "body": marker, "labels": ["workflow"]},
        ).body
        progress = render_marker("progress", {"jobid": jobid, "nonce": "n"})
        bot.post(
            f"/repos/{CONTROL}/issues/{issue['number']}/comments",
            json={"body": f"{progress}\nworking\n{usage_marker(cost)}"},
        )
        local_github.advance(3600)
    config = tmp_path / "tusk.yml"
    config.write_text(
        yaml.safe_dump({"bot": "tusk-bot", "control_repo": CONTROL, "allowed_users": ["alice"]})
    )
    monkeypatch.setenv("TUSK_GITHUB_API_URL", local_github.url)
    monkeypatch.setenv("TUSK_READ_TOKEN", "agent")
    monkeypatch.delenv("TUSK_BOT_TOKEN", raising=False)
    assert tusk_main(["usage", "--config", str(config), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["runs"] == 3 and data["spend_usd"] == 1.375
    assert [(r["key"], r["runs"], r["spend_usd"]) for r in data["by_requester"]] == [
        ("alice", 2, 0.875),
        ("bob", 1, 0.5),
    ]
    assert tusk_main(["usage", "--config", str(config)]) == 0
    text = capsys.readouterr().out
    assert ": 3 run(s), $1.38\n" in text
    assert "bob            1    $0.5000" in text.splitlines()
