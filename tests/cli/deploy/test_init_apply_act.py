"""From nothing to a mention answered, README's four steps: ``tusk init --apply`` as
README writes it, against the local GitHub,
``tusk doctor`` passing, then the workflows apply committed run a mention end to end
under act, with the secrets' values the local GitHub opened from what apply sealed (a
token that came out wrong is refused by the local GitHub, and the run fails)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli.deploy.deploy_world import (
    BOT_LOGIN,
    CONTROL,
    KEY,
    ONE_BOT_TOKEN,
    OWNER,
    OWNER_LOGIN,
    STEPS,
    new_user_world,
    writes,
)
from tusk.sandbox.act_runner import PUBLISHED_AS, ControlRepo

WIDGETS = f"{OWNER_LOGIN}/widgets"
SCRIPT = {
    "steps": [
        {
            "tool_use": {
                "name": "mcp__github__create_comment",
                "input": {"repo": WIDGETS, "number": 1, "body": "Hello from Tusk."},
            }
        },
        {"text": "Commented."},
    ],
    "conversations": [
        {
            "when_prompt_contains": "Self-check 3",
            "steps": [
                {"tool_use": {"name": "mcp__github__history", "input": {"text": "greeted"}}},
                {"text": "Recorded."},
            ],
        }
    ],
}


def scenario() -> dict[str, Any]:
    world = new_user_world(
        # The workflows' own GITHUB_TOKENs (the callers grant what each job needs).
        poll_workflow={
            "user": "github-actions[bot]",
            "repository": CONTROL,
            "permissions": {"contents": "write"},
        },
        agent_workflow={
            "user": "github-actions[bot]",
            "repository": CONTROL,
            "permissions": {"contents": "read", "actions": "read"},
        },
    )
    world["repos"].append(
        {
            "name": WIDGETS,
            "collaborators": {BOT_LOGIN: "write"},
            "files": {"README.md": "# Widgets\n"},
            "issues": [
                {
                    "number": 1,
                    "author": OWNER_LOGIN,
                    "title": "Tests",
                    "body": "How are the tests run?",
                    # README's step 4, word for word.
                    "comments": [{"author": OWNER_LOGIN, "body": STEPS.mention}],
                }
            ],
        }
    )
    return world


def tusk(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The command as a user runs it, in its own process."""
    command = [sys.executable, "-m", "tusk.cli.main", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)


@pytest.mark.act
@pytest.mark.e2e
@pytest.mark.slow
def test_apply_from_nothing_then_a_mention_runs_under_act(
    local_github: Any, scripted_model: Any, tmp_path: Path
) -> None:
    local_github.load(scenario())
    model_url = scripted_model.start(SCRIPT)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TUSK_", "ANTHROPIC_"))}
    env.pop("GITHUB_ACTIONS", None)
    values = {**OWNER, "TUSK_BOT_TOKEN": ONE_BOT_TOKEN, **KEY}
    env |= {name: values[name] for name in STEPS.exports}  # README's step 3 exports
    env["TUSK_GITHUB_API_URL"] = local_github.url

    applied = tusk(*STEPS.apply, env=env)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    # tusk doctor, as README says to run it next: no tusk.yml on this machine, the deployed
    # one read through the API. Every check passes; the warnings are that the poll has
    # not run yet and that the one bot token of step 3 holds more than each role needs.
    bot_roles = {"TUSK_AGENT_TOKEN": ONE_BOT_TOKEN, "TUSK_READ_TOKEN": ONE_BOT_TOKEN}
    doctor = tusk("doctor", "--control-repo", CONTROL, env={**env, **bot_roles})
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "✗" not in doctor.stdout and "all good, 4 warning(s)" in doctor.stdout
    assert doctor.stdout.count("more than it needs for") == 3
    seen = len(local_github.journal())
    again = tusk(*STEPS.apply, env=env)
    assert again.returncode == 0 and "0 of 23 step(s) to do" in again.stdout
    assert writes(local_github.journal()[seen:]) == []

    # The control repository as apply committed it, cloned from the local GitHub.
    folder = tmp_path / "control"
    auth = f"http.extraHeader=Authorization: Bearer {OWNER['TUSK_OWNER_TOKEN']}"
    subprocess.run(
        ["git", "-c", auth, "clone", "-q", local_github.clone_url(CONTROL), str(folder)],
        check=True,
        timeout=60,
    )
    # act's own folders stay out of its copy of the repository (as ControlRepo ignores them).
    (folder / ".gitignore").write_text(".act-home/\n.act-cache/\n.tusk-published/\nevents/\n")
    control = ControlRepo(folder, repo=CONTROL, tusk_ref=PUBLISHED_AS, existing=True)
    stored = local_github.state()["repos"][CONTROL]["secret_values"]

    polled = control.run(
        "workflow_dispatch",
        {"inputs": {}},
        workflow="poll.yml",
        api_url=local_github.url,
        secrets={"TUSK_BOT_TOKEN": stored["TUSK_BOT_TOKEN"], "GITHUB_TOKEN": "poll_workflow"},
    )
    assert polled.ok, polled.stdout[-4000:] + polled.stderr[-2000:]
    (dispatch,) = local_github.dispatches()
    assert dispatch["event_type"] == "tusk-shard"

    secrets = {name: stored[name] for name in ("TUSK_AGENT_TOKEN", "TUSK_READ_TOKEN")}
    secrets |= {"ANTHROPIC_API_KEY": stored["ANTHROPIC_API_KEY"], "GITHUB_TOKEN": "agent_workflow"}
    result = control.run(
        "repository_dispatch",
        {"action": dispatch["event_type"], "client_payload": dispatch["client_payload"]},
        workflow="agent.yml",
        api_url=local_github.url,
        secrets=secrets,
        env={"GITHUB_RUN_ID": "1", "TUSK_LOCAL_DEMO": "1"},
        variables={"TUSK_ANTHROPIC_BASE_URL": model_url},
    )
    assert result.ok, result.stdout[-6000:] + result.stderr[-2000:]
    state = local_github.state()["repos"]
    logs = [
        i
        for i in state[CONTROL]["issues"].values()
        if i["title"].startswith(f"[Agent Log] {WIDGETS} #1")
    ]
    assert [(i["state"], i["state_reason"]) for i in logs] == [("closed", "completed")]
    comments = state[WIDGETS]["issues"]["1"]["comments"]
    said = [c["body"].split("\n")[0] for c in comments if c["author"] == BOT_LOGIN]
    assert "Hello from Tusk." in said
