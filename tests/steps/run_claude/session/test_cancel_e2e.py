"""Cancelling a run with real signals, end to end: ``tusk run-claude`` as its own
process, the real Claude Code waiting on the scripted model, then SIGTERM, SIGINT
or SIGKILL (and the clean-up step). Each ends in exactly one write-up with the
outcome ``cancelled``, the bug label and what the agent wrote so far; never a
traceback, never a second copy."""

from __future__ import annotations

import json
import os
import pwd
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.steps.run_claude.conftest import AGENT_TOKEN, API_KEY, E2E, READ_TOKEN
from tusk.steps.run_claude.box import after_crash, egress
from tusk.steps.run_claude.box import cleanup as box_cleanup

pytestmark = pytest.mark.e2e

GH = "mcp__github__"
WRITTEN = "Started on it; more soon."


def stalled_script() -> dict[str, Any]:
    """The agent comments once, then the model stalls (as a slow API would)."""
    return {
        "steps": [
            {
                "tool_use": {
                    "name": f"{GH}create_comment",
                    "input": {"repo": "alice/widgets", "number": 1, "body": WRITTEN},
                }
            },
            {"stall": 120},
            {"text": "never reached"},
        ]
    }


def environment(e2e: E2E, model_url: str) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(e2e.tmp),
        "TUSK_AGENT_TOKEN": AGENT_TOKEN,
        "TUSK_READ_TOKEN": READ_TOKEN,
        "ANTHROPIC_API_KEY": API_KEY,
        "ANTHROPIC_BASE_URL": model_url,
        "TUSK_GITHUB_API_URL": e2e.github.url,
        "CLAUDE_CODE_MAX_RETRIES": "0",
        "GITHUB_OUTPUT": str(e2e.tmp / "outputs"),
        "GITHUB_STEP_SUMMARY": str(e2e.tmp / "summary.md"),
    }


def start_run(e2e: E2E) -> tuple[subprocess.Popen[str], Any, dict[str, str]]:
    model_url = e2e.model.start(stalled_script())
    inputs = e2e.inputs(model_url)
    env = environment(e2e, model_url)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tusk.cli.main",
            "run-claude",
            "--run-json",
            str(inputs.run_json),
            "--config",
            str(inputs.config_path),
            "--run-dir",
            str(inputs.run_dir),
            "--claude",
            str(inputs.claude),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for(
        lambda: any(c["body"].startswith(WRITTEN) for c in e2e.issue_comments("alice/widgets", 1)),
        what="the agent's comment",
    )
    wait_for(lambda: len(e2e.model.journal()) >= 2, what="the stalled model request")
    return process, inputs, env


def wait_for(check: Any, *, what: str, seconds: float = 90.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def cleanup(inputs: Any, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "tusk.cli.main",
            "run-claude",
            "--cleanup",
            "--run-dir",
            str(inputs.run_dir),
        ],
        env={**env, "GITHUB_OUTPUT": str(Path(env["GITHUB_OUTPUT"]).with_suffix(".cleanup"))},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def assert_nothing_left(run_dir: Path, recorded: dict[str, Any]) -> None:
    """What cleanup.json named is gone: the run's user and its processes, its egress
    proxy, its MCP server and its folder."""
    uid = recorded["agent_uid"]
    deadline = time.monotonic() + 10
    while box_cleanup.processes_of(uid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert box_cleanup.processes_of(uid) == []
    with pytest.raises(KeyError):
        pwd.getpwnam(recorded["agent_user"])
    assert not egress.is_egress_proxy(recorded["egress_pid"], recorded["egress_config"])
    assert not after_crash.is_mcp_server(recorded["mcp_pid"], run_dir)
    assert not Path(recorded["base"]).exists()


def assert_written_up_as_cancelled(e2e: E2E) -> list[str]:
    parts = e2e.log_parts()
    summaries = [body for key, body in parts if key == "summary-1"]
    errors = [body for key, body in parts if key == "error"]
    comments = [body for _, body in parts]
    assert len(summaries) == 1 and len(errors) == 1, comments
    assert "/alice/widgets/issues/1#issuecomment-" in summaries[0]  # what was written so far
    issue = e2e.log_issue()
    assert issue["state"] == "open"
    assert [label["name"] for label in issue["labels"]] == ["workflow", "bug"]
    return errors


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_agent_and_writes_up_cancelled(e2e: E2E, signum: signal.Signals) -> None:
    e2e.model.tolerate_failures()  # the stalled request is never answered
    process, inputs, env = start_run(e2e)
    recorded = json.loads((inputs.run_dir / box_cleanup.CLEANUP_FILE).read_text())
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=90)
    assert process.returncode == 1, stderr[-2000:]
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr[-2000:]
    (error,) = assert_written_up_as_cancelled(e2e)
    assert "The run was cancelled" in error and f"received {signum.name}" in error
    outputs = (e2e.tmp / "outputs").read_text()
    assert "\ncancelled\n" in outputs and "\nfailure\n" in outputs
    # The run's own user (not the harness's prefix user): nothing of it outlived the run.
    assert_nothing_left(inputs.run_dir, recorded)
    again = cleanup(inputs, env)  # the always-run step after it adds nothing
    assert again.returncode == 0, again.stdout + again.stderr
    assert "is complete" in again.stdout
    assert_written_up_as_cancelled(e2e)


def test_a_second_signal_does_not_cut_the_write_up_short(e2e: E2E) -> None:
    """What Actions does: SIGINT, then SIGTERM while the run is still writing up."""
    e2e.model.tolerate_failures()
    process, _, _ = start_run(e2e)
    # Slow the write-up's comments down, so the second signal lands in the middle of it.
    comments = r"^/repos/alice/tusk-control/issues/1/comments$"
    e2e.github.add_fault("POST", comments, delay=1.5, count=None)
    seen = len(e2e.github.journal())
    process.send_signal(signal.SIGINT)
    # The write-up starts by listing the parts already on the log issue.
    wait_for(
        lambda: any(
            e["method"] == "GET" and e["path"].endswith("/tusk-control/issues/1/comments")
            for e in e2e.github.journal()[seen:]
        ),
        what="the write-up to start",
        seconds=30,
    )
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=90)
    assert process.returncode == 1 and "Traceback" not in stderr, stderr[-2000:]
    assert_written_up_as_cancelled(e2e)


def test_after_sigkill_the_cleanup_step_records_the_run_as_cancelled(e2e: E2E) -> None:
    e2e.model.tolerate_failures()
    process, inputs, env = start_run(e2e)
    recorded = json.loads((inputs.run_dir / box_cleanup.CLEANUP_FILE).read_text())
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=30)
    # Killed: nothing of the run was undone; its servers and user are still there. Its
    # box died with it (bwrap's --die-with-parent), and every process in it.
    assert pwd.getpwnam(recorded["agent_user"]).pw_uid == recorded["agent_uid"]
    assert egress.is_egress_proxy(recorded["egress_pid"], recorded["egress_config"])
    deadline = time.monotonic() + 10
    while box_cleanup.processes_of(recorded["agent_uid"]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert box_cleanup.processes_of(recorded["agent_uid"]) == []
    assert e2e.log_comments() == []  # the killed process could write nothing
    done = cleanup(inputs, env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "recorded the run as cancelled (killed)" in done.stdout
    (error,) = assert_written_up_as_cancelled(e2e)
    assert "stopped before it finished" in error
    assert_nothing_left(inputs.run_dir, recorded)
    cleanup_outputs = Path(env["GITHUB_OUTPUT"]).with_suffix(".cleanup").read_text()
    assert "\ncancelled\n" in cleanup_outputs and "\ncomplete\n" in cleanup_outputs
    again = cleanup(inputs, env)  # a second clean-up doubles nothing
    assert again.returncode == 0
    assert_written_up_as_cancelled(e2e)
