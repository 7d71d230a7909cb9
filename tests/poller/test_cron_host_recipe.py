"""The cron-host recipe in deploy/: the systemd unit and the container run a `tusk poll`
command line that parses, with an environment the poller reads, and that command line
really polls, stops on SIGTERM and leaves its state for the next start."""

from __future__ import annotations

import configparser
import json
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from poller_helpers import CONTROL, issue, said, scenario

from tusk.cli.main import COMMANDS, command_parser

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
POLL = next(c for c in COMMANDS if c.name == "poll")


def unit() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(DEPLOY / "tusk-poll.service")
    return parser


def container() -> tuple[list[str], dict[str, str]]:
    command: list[str] = []
    env: dict[str, str] = {}
    for line in (DEPLOY / "Containerfile").read_text().splitlines():
        if line.startswith("CMD "):
            command = json.loads(line[4:])
        elif line.startswith("ENV "):
            env.update(dict(item.split("=", 1) for item in shlex.split(line[4:])))
    return command, env


def env_file() -> dict[str, str]:
    lines = (DEPLOY / "poll.env.example").read_text().splitlines()
    pairs = [line.split("=", 1) for line in lines if line and not line.startswith("#")]
    return {key: value for key, value in pairs}


def poll_args(argv: list[str]) -> Any:
    assert Path(argv[0]).name == "tusk" and argv[1] == "poll", argv
    return command_parser(POLL).parse_args(argv[2:])


def test_the_systemd_unit_and_the_container_run_tusk_poll_loop() -> None:
    exec_start = shlex.split(unit()["Service"]["ExecStart"])
    command, _ = container()
    for argv in (exec_start, command):
        args = poll_args(argv)
        assert args.loop and not args.once


def test_the_environment_they_give_is_what_the_poller_reads() -> None:
    given = env_file()
    _, image_env = container()
    assert {"TUSK_BOT_TOKEN", "TUSK_DISPATCH_TOKEN", "TUSK_POLL_STATE"} <= set(given)
    assert set(given) | set(image_env) <= set(POLL.env)
    assert unit()["Service"]["EnvironmentFile"] == "/etc/tusk/poll.env"
    # The state file lives where the service may write: its StateDirectory, the volume.
    assert given["TUSK_POLL_STATE"].startswith("/var/lib/" + unit()["Service"]["StateDirectory"])
    assert image_env["TUSK_POLL_STATE"] == given["TUSK_POLL_STATE"]
    assert "VOLUME /var/lib/tusk" in (DEPLOY / "Containerfile").read_text()
    assert unit()["Service"]["KillSignal"] == "SIGTERM"


@pytest.mark.slow
def test_the_recipes_command_polls_stops_on_sigterm_and_keeps_its_state(
    local_github: Any, tmp_path: Path
) -> None:
    local_github.load(scenario(issues=[issue(1, [said("alice", "@tusk-bot fix it")])]))
    config = tmp_path / "tusk.yml"
    config.write_text(
        yaml.safe_dump({"bot": "tusk-bot", "control_repo": CONTROL, "allowed_users": ["alice"]})
    )
    state = tmp_path / "var" / "poll-state.json"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "TUSK_"))},
        **env_file(),
        "TUSK_BOT_TOKEN": "bot-read",
        "TUSK_DISPATCH_TOKEN": "dispatch",
        "TUSK_CONFIG": str(config),
        "TUSK_POLL_STATE": str(state),
        "TUSK_GITHUB_API_URL": local_github.url,
    }
    argv = shlex.split(unit()["Service"]["ExecStart"])
    process = subprocess.Popen(
        [sys.executable, "-m", "tusk.cli.main", *argv[1:]],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    assert process.stdout.readline().startswith("notifications: 1 unread thread")
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0
    assert len(local_github.dispatches()) == 1
    assert json.loads(state.read_text())["last_modified"]
