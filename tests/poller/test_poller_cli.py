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
from tusk.poller.cli import loop
from tusk.poller.cycle import CycleReport

from tusk.cli import main


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
            "tusk.cli",
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
    data = json.loads(capsys.readouterr().out)
    assert "unknown permission" in data["error"]
    assert data["operations"] == ["comment"] and data["prs_per_repo"] == 0


def test_loop_survives_a_failed_cycle_and_polls_again(local_github: Any) -> None:
    local_github.load(scenario(issues=[issue(1, [said("alice", "@tusk-bot fix it")])]))
    h = make_poller(local_github)
    local_github.add_fault("GET", r"^/notifications$", status=502, count=5)  # every retry fails
    reports: list[CycleReport] = []
    loop(h.poller, stop=NoWait(), least_interval=0, on_report=reports.append, max_cycles=2)
    assert reports[0].errors and reports[1].errors == []
    assert len(decode_dispatches(local_github.dispatches()).tasks) == 1
