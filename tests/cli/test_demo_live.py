"""``tusk demo --live`` against the local GitHub standing in for github.com: only the
secrets it uses, the opener checked before anything is written, and the demo's own
log issue found by its job id (``#1`` is not ``#12``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest
import yaml

from tusk.cli import demo_live
from tusk.contracts.config import Settings
from tusk.errors import ConfigError, UserError
from tusk.issues.log_issue import log_marker

BOT = "tusk-bot"
CONTROL = "alice/tusk-control"
REPO = "alice/sandbox"
CONFIG = {"bot": BOT, "control_repo": CONTROL, "allowed_users": ["alice"]}


def scenario() -> dict[str, Any]:
    return {
        "users": [{"login": "alice"}, {"login": "mallory"}, {"login": BOT}],
        "tokens": {
            "alice": {"user": "alice", "scopes": ["repo"]},
            "mallory": {"user": "mallory", "scopes": ["repo"]},
            "agent": {"user": BOT, "scopes": ["repo"]},
        },
        "repos": [
            {"name": REPO, "files": {"README.md": "# Sandbxo\n"}},
            {"name": CONTROL, "private": True, "collaborators": {BOT: "write"}},
        ],
    }


def settings() -> Settings:
    return Settings.model_validate(CONFIG)


def args(tmp_path: Path) -> argparse.Namespace:
    config = tmp_path / "tusk.yml"
    config.write_text(yaml.safe_dump(CONFIG))
    return argparse.Namespace(repo=REPO, config=str(config), timeout_minutes=3.0)


def live_env(monkeypatch: pytest.MonkeyPatch, local_github: Any, dispatch: str) -> None:
    for name in ("TUSK_AGENT_TOKEN", "TUSK_READ_TOKEN", "ANTHROPIC_API_KEY", "TUSK_CONFIG"):
        monkeypatch.delenv(name, raising=False)  # not used by --live: not required either
    monkeypatch.setenv("TUSK_BOT_TOKEN", "agent")
    monkeypatch.setenv("TUSK_DISPATCH_TOKEN", dispatch)
    monkeypatch.setenv("TUSK_GITHUB_API_URL", local_github.url)


def log_issue(agent: Any, number: int, *, close: str | None = None) -> None:
    """A log issue for the demo issue ``number``, as build-context opens it."""
    jobid = demo_live.demo_jobid(REPO, number)
    created = agent.post(
        f"/repos/{CONTROL}/issues",
        {
            "title": f"[Agent Log] {REPO} #{number} — 2026-12-01 10:00",
            "body": f"{log_marker(jobid, REPO)}\n# Task",
            "labels": ["workflow"],
        },
    ).body
    if close:
        agent.patch(
            f"/repos/{CONTROL}/issues/{created['number']}",
            {"state": "closed", "state_reason": close},
        )


def test_live_needs_only_the_poller_tokens_and_names_the_missing_ones(
    local_github: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local_github.load(scenario())
    live_env(monkeypatch, local_github, "alice")
    monkeypatch.delenv("TUSK_BOT_TOKEN")
    monkeypatch.delenv("TUSK_DISPATCH_TOKEN")
    with pytest.raises(ConfigError) as missing:
        demo_live.run_live(args(tmp_path), poll=lambda *_: None)
    assert "TUSK_BOT_TOKEN" in str(missing.value) and "TUSK_DISPATCH_TOKEN" in str(missing.value)
    for unused in ("TUSK_AGENT_TOKEN", "TUSK_READ_TOKEN", "ANTHROPIC_API_KEY"):
        assert unused not in str(missing.value)


def test_an_opener_who_may_not_start_work_is_refused_before_anything_is_written(
    local_github: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local_github.load(scenario())
    live_env(monkeypatch, local_github, "mallory")
    with pytest.raises(UserError, match="mallory would open the demo issue but is not in"):
        demo_live.run_live(args(tmp_path), poll=lambda *_: None)
    assert [e for e in local_github.journal() if e["method"] != "GET"] == []


def test_the_bot_may_not_open_the_demo_issue(local_github: Any) -> None:
    local_github.load(scenario())
    with pytest.raises(UserError, match="belongs to the bot"):
        demo_live.check_opener(local_github.gateway("agent"), settings())


def test_the_demo_log_issue_is_found_by_job_id_not_by_a_shared_title_prefix(
    local_github: Any,
) -> None:
    local_github.load(scenario())
    agent = local_github.gateway("agent")
    log_issue(agent, 12, close="completed")  # "alice/sandbox #12" contains "alice/sandbox #1"
    alice = local_github.gateway("alice")
    assert demo_live.find_demo_log(alice, settings(), repo=REPO, number=1) is None
    log_issue(agent, 1)
    found = demo_live.find_demo_log(alice, settings(), repo=REPO, number=1)
    assert found is not None and found.title.startswith(f"[Agent Log] {REPO} #1 ")


def test_live_opens_the_issue_polls_and_reports_the_runs_outcome(
    local_github: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    local_github.load(scenario())
    live_env(monkeypatch, local_github, "alice")
    agent = local_github.gateway("agent")
    polls: list[Path] = []
    sleeps: list[float] = []
    now = [0.0]

    def poll(config: Path, state: Path) -> None:
        polls.append(state)
        if len(polls) == 1:  # the control repository's decoy: another issue's finished run
            log_issue(agent, 12, close="completed")
        if len(polls) == 2:  # the demo's own run starts, then finishes
            log_issue(agent, 1)
        if len(polls) == 3:
            (opened,) = [
                i
                for i in agent.get(f"/repos/{CONTROL}/issues")
                if i["title"].startswith(f"[Agent Log] {REPO} #1 ")
            ]
            agent.patch(
                f"/repos/{CONTROL}/issues/{opened['number']}",
                {"state": "closed", "state_reason": "completed"},
            )

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        now[0] += seconds

    code = demo_live.run_live(args(tmp_path), poll=poll, sleep=sleep, clock=lambda: now[0])
    assert code == 0
    assert len(polls) == 3 and sleeps == [60.0, 60.0]
    assert len({str(p) for p in polls}) == 1  # one state file: idle polls are 304s
    (demo,) = local_github.gateway("alice").get(f"/repos/{REPO}/issues")
    assert demo["number"] == 1 and demo["body"].startswith(f"@{BOT} ")
    assert "The run finished" in capsys.readouterr().out


def test_live_times_out_when_no_run_finishes(
    local_github: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local_github.load(scenario())
    live_env(monkeypatch, local_github, "alice")
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    code = demo_live.run_live(
        args(tmp_path), poll=lambda *_: None, sleep=sleep, clock=lambda: now[0]
    )
    assert code == 1 and now[0] == 180.0
