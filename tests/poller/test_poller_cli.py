"""``tusk poll`` and ``tusk permissions parse`` as users run them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from poller_helpers import CONTROL, REPO, decode_dispatches, issue, make_poller, said, scenario

from tusk.cli.main import main
from tusk.poller import state_file
from tusk.poller.cli import loop
from tusk.poller.core import PollState
from tusk.poller.cycle import CycleReport


def write_config(tmp_path: Path) -> Path:
    path = tmp_path / "tusk.yml"
    path.write_text(
        yaml.safe_dump({"bot": "tusk-bot", "control_repo": CONTROL, "allowed_users": ["alice"]}),
        encoding="utf-8",
    )
    return path


def env_for(local_github: Any) -> dict[str, str]:
    return {
        "TUSK_BOT_TOKEN": "bot-read",
        "TUSK_DISPATCH_TOKEN": "dispatch",
        "TUSK_GITHUB_API_URL": local_github.url,
    }


def test_poll_once_dispatches_and_marks_read(
    local_github: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    local_github.load(scenario(issues=[issue(1, [said("alice", "@tusk-bot fix it")])]))
    for name, value in env_for(local_github).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    assert main(["poll", "--once", "--config", str(write_config(tmp_path))]) == 0
    out = capsys.readouterr().out
    (doc,) = decode_dispatches(local_github.dispatches()).tasks
    assert f"dispatched {doc.jobid}" in out
    assert "bot-read" not in out and "dispatch\n" not in out
    assert doc.repo == REPO
    tokens = {
        entry.get("token") for entry in local_github.journal() if "/dispatches" in entry["path"]
    }
    assert tokens == {"dispatch"}  # the dispatch token sends; the bot token only reads


def test_poll_once_without_tokens_names_the_missing_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("TUSK_BOT_TOKEN", raising=False)
    monkeypatch.delenv("TUSK_DISPATCH_TOKEN", raising=False)
    assert main(["poll", "--once", "--config", str(write_config(tmp_path))]) == 1
    assert "TUSK_BOT_TOKEN" in capsys.readouterr().err


def test_loop_waits_as_github_asks_and_stops_when_told(local_github: Any) -> None:
    local_github.load(scenario(issues=[issue(1, [said("alice", "@tusk-bot fix it")])]))
    h = make_poller(local_github)
    stop = threading.Event()
    reports: list[CycleReport] = []
    waits: list[float] = []

    class Recorder(threading.Event):
        def wait(self, timeout: float | None = None) -> bool:
            waits.append(timeout or 0.0)
            if len(waits) == 3:
                stop.set()
            return stop.is_set()

        def is_set(self) -> bool:
            return stop.is_set()

    loop(h.poller, stop=Recorder(), least_interval=5.0, on_report=reports.append)
    assert [r.status for r in reports] == [200, 200, 304]
    assert waits == [60.0, 60.0, 60.0]  # X-Poll-Interval beats the shorter least interval
    assert len(decode_dispatches(local_github.dispatches()).tasks) == 1


class NoWait(threading.Event):
    """The loop's wait between cycles, without the wait."""

    def wait(self, timeout: float | None = None) -> bool:
        return False


def test_loop_stops_cleanly_on_sigterm(local_github: Any, tmp_path: Path) -> None:
    local_github.load(scenario())
    env = {**os.environ, **env_for(local_github)}
    env.pop("GITHUB_ACTIONS", None)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tusk.cli.main",
            "poll",
            "--loop",
            "--config",
            str(write_config(tmp_path)),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    first = process.stdout.readline()
    assert first.startswith("notifications:")
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0


def test_permissions_parse_prints_effective_permissions(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code = main(
        [
            "permissions",
            "parse",
            "@tusk-bot [permissions: comment-on-this-issue, pr-limit=1] fix the typo",
            "--config",
            str(write_config(tmp_path)),
        ]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["operations"] == ["comment"] and data["only_this_thread"] is True
    assert data["error"] is None


def test_permissions_parse_reports_a_malformed_marker(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TUSK_CONFIG", raising=False)
    assert main(["permissions", "parse", "@tusk-bot [permissions: everything] go"]) == 2
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert "unknown permission" in data["error"]
    assert captured.err.startswith(
        "error: the permission marker [permissions: everything] cannot be read: unknown "
    )
    assert data["operations"] == ["comment"] and data["prs_per_repo"] == 0


def test_loop_survives_a_failed_cycle_and_polls_again(local_github: Any) -> None:
    local_github.load(scenario(issues=[issue(1, [said("alice", "@tusk-bot fix it")])]))
    h = make_poller(local_github)
    local_github.add_fault("GET", r"^/notifications$", status=502, count=5)  # every retry fails
    reports: list[CycleReport] = []
    loop(h.poller, stop=NoWait(), least_interval=0, on_report=reports.append, max_cycles=2)
    assert reports[0].errors and reports[1].errors == []
    assert len(decode_dispatches(local_github.dispatches()).tasks) == 1


def notification_statuses(local_github: Any) -> list[int]:
    """The answers to listing the inbox (marking it read is a PUT on the same path)."""
    return [
        e["status"]
        for e in local_github.journal()
        if e["path"] == "/notifications" and e["method"] == "GET"
    ]


def test_poll_once_with_a_state_file_makes_an_idle_poll_a_free_304(
    local_github: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each --once is a new process; the state file carries Last-Modified across them."""
    local_github.load(scenario(issues=[issue(1, [said("alice", "@tusk-bot fix it")])]))
    for name, value in env_for(local_github).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    config, state = str(write_config(tmp_path)), tmp_path / "cache" / "poll-state.json"
    for _ in range(3):  # work, then its own mark-read, then nothing
        assert main(["poll", "--once", "--config", config, "--state", str(state)]) == 0
    assert notification_statuses(local_github) == [200, 200, 304]
    saved = json.loads(state.read_text())
    assert saved["bot"] == "tusk-bot" and saved["last_modified"] and saved["poll_interval"] == 60
    used = local_github.gateway("bot-read").get("/rate_limit")["resources"]["core"]["used"]
    assert main(["poll", "--once", "--config", config, "--state", str(state)]) == 0
    after = local_github.gateway("bot-read").get("/rate_limit")["resources"]["core"]["used"]
    assert after == used  # the idle poll cost no rate limit


def test_without_a_state_file_every_idle_poll_is_a_counted_200(
    local_github: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local_github.load(scenario(issues=[issue(1, [said("alice", "@tusk-bot fix it")])]))
    for name, value in env_for(local_github).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("TUSK_POLL_STATE", raising=False)
    config = str(write_config(tmp_path))
    for _ in range(3):
        assert main(["poll", "--once", "--config", config]) == 0
    assert notification_statuses(local_github) == [200, 200, 200]


@pytest.mark.parametrize(
    "content",
    [
        "not json",
        json.dumps({"version": 1, "bot": "other-bot", "api_url": "x", "last_modified": "x"}),
        json.dumps({"version": 99}),
    ],
    ids=["corrupt", "another-bot", "unknown-version"],
)
def test_a_state_file_that_does_not_fit_is_ignored_not_trusted(
    local_github: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str
) -> None:
    local_github.load(scenario(issues=[issue(1, [said("alice", "@tusk-bot fix it")])]))
    for name, value in env_for(local_github).items():
        monkeypatch.setenv(name, value)
    state = tmp_path / "poll-state.json"
    state.write_text(content.replace('"x"', '"Thu, 01 Jan 2099 00:00:00 GMT"'))
    monkeypatch.setenv("TUSK_POLL_STATE", str(state))
    assert main(["poll", "--once", "--config", str(write_config(tmp_path))]) == 0
    assert len(decode_dispatches(local_github.dispatches()).tasks) == 1  # not hidden by a 304
    assert json.loads(state.read_text())["bot"] == "tusk-bot"


def test_a_restarted_loop_picks_up_where_the_last_one_stopped(
    local_github: Any, tmp_path: Path
) -> None:
    """A cron host's service restarts (an upgrade, a reboot): its first poll is still a 304."""
    from tusk.poller.cli import StateKeeper

    local_github.load(scenario(issues=[issue(1, [said("alice", "@tusk-bot fix it")])]))
    state = tmp_path / "poll-state.json"

    def run_loop(cycles: int) -> list[int]:
        h = make_poller(local_github)
        keeper = StateKeeper(state, bot="tusk-bot", api_url=local_github.url)
        reports: list[CycleReport] = []
        loop(h.poller, stop=NoWait(), on_report=reports.append, max_cycles=cycles, keeper=keeper)
        return [r.status for r in reports]

    assert run_loop(2) == [200, 200]
    assert run_loop(1) == [304]


def test_the_state_file_keeps_how_far_the_sweep_has_read(tmp_path: Path) -> None:
    """A scheduled poller that was down for hours looks back to its last sweep: the mark
    must outlive the process, like ``Last-Modified``."""
    path = tmp_path / "state.json"
    state = PollState(
        last_modified="x", sweep_etag='W/"e"', swept_since="2026-01-01T00:00:06+00:00"
    )
    state_file.save(path, state, bot="tusk-bot", api_url="https://api.github.com")
    loaded = state_file.load(path, bot="tusk-bot", api_url="https://api.github.com")
    assert loaded.swept_since == "2026-01-01T00:00:06+00:00" and loaded.sweep_etag == 'W/"e"'
