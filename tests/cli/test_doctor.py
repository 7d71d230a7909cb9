"""``tusk doctor`` against the local GitHub: one line per check, and each failure
says what to do."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from tusk.cli.doctor import (
    FAIL,
    OK,
    ROLES,
    STORED_SECRETS,
    WARN,
    judge_last_poll,
    judge_token,
    parse_scopes,
    schedule_interval,
)
from tusk.cli.init import RELEASE, TuskRef, caller_files
from tusk.cli.main import main as tusk_main

CONTROL = "alice/tusk-control"
TOKENS = {
    "TUSK_BOT_TOKEN": "bot-read",
    "TUSK_DISPATCH_TOKEN": "dispatch",
    "TUSK_AGENT_TOKEN": "agent",
    "TUSK_READ_TOKEN": "read",
}


def scenario(**changes: Any) -> dict[str, Any]:
    callers = caller_files(TuskRef.parse("alice/tusk@main"))
    reusable = {
        f".github/workflows/tusk-{name}.yml": "on: workflow_call\n"
        for name in ("agent", "poll", "go-away")
    }
    world: dict[str, Any] = {
        "now": "2026-01-01T01:00:00Z",
        "users": [{"login": "alice"}, {"login": "carol"}, {"login": "tusk-bot"}],
        "tokens": {
            "bot-read": {"user": "tusk-bot", "scopes": ["notifications", "repo"]},
            "dispatch": {"user": "alice", "scopes": ["repo"]},
            "agent": {"user": "tusk-bot", "scopes": ["repo", "delete_repo", "workflow"]},
            "read": {"user": "tusk-bot", "scopes": ["repo"], "read_only": True},
        },
        "repos": [
            {"name": "alice/tusk", "files": reusable},
            {
                "name": CONTROL,
                "private": True,
                "collaborators": {"tusk-bot": "write"},
                "labels": ["workflow"],
                "files": callers,
                "workflow_runs": [{"workflow": "poll.yml", "created_at": "2026-01-01T00:58:00Z"}],
                "secrets": list(STORED_SECRETS),
            },
        ],
    }
    world.update(changes)
    return world


@pytest.fixture
def doctor(local_github: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    config = tmp_path / "tusk.yml"
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.setenv("TUSK_GITHUB_API_URL", local_github.url)
    for name, value in TOKENS.items():
        monkeypatch.setenv(name, value)

    def run(
        capsys: pytest.CaptureFixture[str], allowed: tuple[str, ...] = ("carol",)
    ) -> tuple[int, list[str]]:
        settings = {"bot": "tusk-bot", "control_repo": CONTROL, "allowed_users": list(allowed)}
        config.write_text(yaml.safe_dump(settings))
        code = tusk_main(["doctor", "--config", str(config)])
        return code, capsys.readouterr().out.splitlines()

    return run


def test_a_sound_deployment_passes_every_check(
    local_github: Any, doctor: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    local_github.load(scenario())
    code, lines = doctor(capsys)
    assert code == 0, "\n".join(lines)
    assert lines[:4] == [
        "✓ TUSK_BOT_TOKEN: belongs to tusk-bot, scopes notifications, repo",
        "✓ TUSK_DISPATCH_TOKEN: belongs to alice, scopes repo",
        "✓ TUSK_AGENT_TOKEN: belongs to tusk-bot, scopes delete_repo, repo, workflow",
        "✓ TUSK_READ_TOKEN: belongs to tusk-bot, scopes repo",
    ]
    assert "✓ bot is not the owner: tusk-bot is not alice" in lines
    assert "✓ notifications readable: tusk-bot's notifications can be read" in lines
    assert f"✓ {CONTROL} writable (TUSK_AGENT_TOKEN): TUSK_AGENT_TOKEN may write to {CONTROL}" in (
        lines
    )
    assert "✓ allowed user carol: exists" in lines
    assert f"✓ workflows in {CONTROL}: agent.yml, poll.yml, go-away.yml call alice/tusk@main" in (
        lines
    )
    assert "✓ alice/tusk@main: tusk-agent.yml resolves" in lines
    assert (
        f"✓ secrets of {CONTROL}: TUSK_BOT_TOKEN, TUSK_AGENT_TOKEN, TUSK_READ_TOKEN, "
        "ANTHROPIC_API_KEY stored"
    ) in lines
    # Missing labels were created: the first run would have needed them.
    labels = next(line for line in lines if line.startswith(f"✓ labels in {CONTROL}"))
    assert "(created bug, tusk-history, tusk-memory, tusk-blocklist)" in labels
    names = set(local_github.state()["repos"][CONTROL]["labels"])
    assert {"workflow", "bug", "tusk-history", "tusk-memory", "tusk-blocklist"} <= names
    assert lines[-1] == f"{len(lines) - 2} check(s): all good"


def test_each_problem_is_one_line_with_its_fix(
    local_github: Any, doctor: Any, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    world = scenario()
    world["tokens"]["agent"]["scopes"] = ["repo"]  # no delete_repo, no workflow
    world["tokens"]["bot-read"]["user"] = "alice"  # the owner's token, not the bot's
    world["repos"][1]["collaborators"] = {"tusk-bot": "read"}
    world["repos"][1]["files"] = {
        name: text.replace("@main", "@v9") for name, text in world["repos"][1]["files"].items()
    }
    local_github.load(world)
    monkeypatch.delenv("TUSK_READ_TOKEN")
    code, lines = doctor(capsys, allowed=("carol", "nobody-here"))
    assert code == 1
    text = "\n".join(lines)
    assert (
        "✗ TUSK_BOT_TOKEN: belongs to alice, not tusk-bot (the poller) → create a classic token "
        "for tusk-bot with notifications, repo and store it as the secret TUSK_BOT_TOKEN" in text
    )
    assert "✗ TUSK_AGENT_TOKEN: belongs to tusk-bot, scopes repo; lacks delete_repo, workflow" in (
        text
    )
    assert "✗ TUSK_READ_TOKEN: not set → export TUSK_READ_TOKEN" in text
    assert (
        f"✗ {CONTROL} writable (TUSK_AGENT_TOKEN): TUSK_AGENT_TOKEN may read {CONTROL} but not "
        f"write to it → give tusk-bot write access to {CONTROL}" in text
    )
    # One line for the release, and the right value to call instead.
    assert [line for line in lines if line.startswith("✗ alice/tusk@v9")] == [
        "✗ alice/tusk@v9: no tusk-agent.yml, tusk-go-away.yml, tusk-poll.yml at v9 (no such "
        f"ref, or not readable) → call {RELEASE}, the release this tusk is (`tusk init DIR "
        "--force` writes callers of it), or another tag or commit of a public Tusk repository"
    ]
    assert "✗ allowed user nobody-here: no such GitHub user → fix the spelling" in text
    assert "✓ allowed user carol: exists" in text
    assert f"✗ labels in {CONTROL}: TUSK_AGENT_TOKEN cannot create labels" in text
    assert "problem(s) to fix" in lines[-1]
    assert any(
        line.startswith(f"! secrets of {CONTROL}: TUSK_AGENT_TOKEN may not list") for line in lines
    )


def test_verdicts_on_token_scopes() -> None:
    role = ROLES["agent_token"]
    assert parse_scopes(None) is None
    assert parse_scopes("repo, workflow,delete_repo") == {"repo", "workflow", "delete_repo"}
    fine_grained = judge_token(role, login="tusk-bot", scopes=None, expected_login="tusk-bot")
    assert fine_grained.status == WARN and "not a classic token" in fine_grained.detail
    good = judge_token(
        role,
        login="Tusk-Bot",
        scopes={"repo", "delete_repo", "workflow"},
        expected_login="tusk-bot",
    )
    assert good.status == OK
    # A read token that may write and delete does its job, and is named for what it holds.
    wide = judge_token(
        ROLES["read_token"],
        login="tusk-bot",
        scopes={"repo", "delete_repo", "workflow"},
        expected_login="tusk-bot",
    )
    assert wide.status == WARN
    assert wide.line() == (
        "! TUSK_READ_TOKEN: belongs to tusk-bot, scopes delete_repo, repo, workflow: more than "
        "it needs for the agent's reads (delete_repo, workflow) → the least-privilege set-up gives "
        "each role a token of its own with only its scopes: create a classic token for "
        "tusk-bot with repo and store it as the secret TUSK_READ_TOKEN"
    )
    anyone = judge_token(
        ROLES["dispatch_token"], login="member", scopes={"repo"}, expected_login=None
    )
    assert anyone.status == OK
    assert judge_token(role, login="x", scopes=set(), expected_login="tusk-bot").status == FAIL


@pytest.mark.parametrize(
    ("cron", "minutes"),
    [
        ("2-57/5 * * * *", 5),
        ("*/5 * * * *", 5),
        ("3-53/10 * * * *", 10),
        ("8,38 * * * *", 30),
        ("9 * * * *", 60),
        ("0 */6 * * *", 360),
        ("15 9 * * *", 1440),
    ],
)
def test_the_schedules_interval_is_its_longest_gap(cron: str, minutes: int) -> None:
    assert schedule_interval(cron) == timedelta(minutes=minutes)


@pytest.mark.parametrize("cron", ["0 9 * * 1", "*/5 * *", "61 * * * *", "@hourly"])
def test_a_schedule_the_check_cannot_read_has_no_interval(cron: str) -> None:
    assert schedule_interval(cron) is None


POLL = 'on:\n  schedule:\n    - cron: "2-57/5 * * * *"\n'
NOW = datetime(2026, 1, 1, 1, 0, tzinfo=UTC)


def test_a_poll_older_than_three_intervals_is_a_warning_with_what_to_do() -> None:
    fresh = judge_last_poll(POLL, NOW - timedelta(minutes=15), NOW)
    assert fresh.status == OK
    stale = judge_last_poll(POLL, NOW - timedelta(minutes=16), NOW)
    assert stale.status == WARN
    assert "more than 3 × the 5-minute schedule" in stale.detail
    assert "may drop them" in stale.fix and "tusk poll --loop" in stale.fix
    assert judge_last_poll(POLL, None, NOW).status == WARN
    assert judge_last_poll("on: workflow_dispatch\n", None, NOW).status == OK


def test_doctor_warns_when_the_last_poll_is_old(
    local_github: Any, doctor: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    world = scenario()
    world["repos"][1]["workflow_runs"] = [
        {"workflow": "poll.yml", "created_at": "2026-01-01T00:20:00Z"},
        {
            "workflow": "agent.yml",
            "created_at": "2026-01-01T00:59:00Z",
            "event": "repository_dispatch",
        },
    ]
    local_github.load(world)
    code, lines = doctor(capsys)
    assert code == 0  # a warning, not a failure
    (line,) = [line for line in lines if line.startswith("! last poll")]
    assert "2026-01-01 00:20 UTC" in line and "more than 3 × the 5-minute schedule" in line
    assert lines[-1].endswith("1 warning(s)")


def test_doctor_shows_a_recent_poll_as_fine(
    local_github: Any, doctor: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    local_github.load(scenario())
    _, lines = doctor(capsys)
    assert any(line.startswith("✓ last poll: 2026-01-01 00:58 UTC") for line in lines)


def test_a_token_github_refuses_may_be_mistyped_not_only_expired(
    local_github: Any, doctor: Any, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    local_github.load(scenario())
    monkeypatch.setenv("TUSK_READ_TOKEN", "reade")  # one letter too many
    code, lines = doctor(capsys)
    assert code == 1
    assert (
        "✗ TUSK_READ_TOKEN: GitHub refused it: mistyped, cut short, expired or revoked → check "
        "that the whole token was pasted (classic tokens start with ghp_), else create a new one"
    ) in lines


def test_doctor_offline_says_so_in_one_line_without_urllib3s_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("TUSK_GITHUB_API_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("TUSK_BOT_TOKEN", "x")  # a short token: the message stays whole
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    config = tmp_path / "tusk.yml"
    config.write_text(
        yaml.safe_dump({"bot": "tusk-bot", "control_repo": CONTROL, "allowed_users": ["carol"]})
    )
    code = tusk_main(["doctor", "--config", str(config)])
    error = capsys.readouterr().err
    assert code == 1
    assert "could not reach GitHub" in error and "([Errno 111] Connection refused)" in error
    assert "HTTPConnectionPool" not in error and "Traceback" not in error
    assert "***" not in error


def test_no_dispatch_token_is_fine_the_poll_workflow_has_its_own(
    local_github: Any, doctor: Any, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    local_github.load(scenario())
    monkeypatch.delenv("TUSK_DISPATCH_TOKEN")
    code, lines = doctor(capsys)
    assert code == 0, lines
    assert (
        "✓ TUSK_DISPATCH_TOKEN: not set: the poll workflow dispatches with its own GITHUB_TOKEN "
        "(contents: write); only a poller on a cron host needs it"
    ) in lines


def test_doctor_reads_which_secrets_the_control_repository_stores(
    local_github: Any, doctor: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """What the workflows will get, through the API: exported tokens prove nothing there."""
    world = scenario()
    world["repos"][1]["secrets"] = ["TUSK_BOT_TOKEN", "TUSK_READ_TOKEN"]
    local_github.load(world)
    code, lines = doctor(capsys)
    assert code == 1
    assert (
        f"✗ secrets of {CONTROL}: missing TUSK_AGENT_TOKEN, ANTHROPIC_API_KEY → gh secret set "
        f"TUSK_AGENT_TOKEN --repo {CONTROL} && gh secret set ANTHROPIC_API_KEY --repo {CONTROL}"
    ) in lines
    listed = [e for e in local_github.journal() if e["path"].endswith("/actions/secrets")]
    assert listed and all(e["status"] == 200 for e in listed)
