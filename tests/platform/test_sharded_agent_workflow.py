"""A context too large for one dispatch travels as shards through the real agent
workflow under act, with repeated deliveries, and still yields exactly one run."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tusk.sandbox.act_runner import ControlRepo

pytestmark = [pytest.mark.act, pytest.mark.e2e, pytest.mark.slow]

CONTROL = "alice/tusk-control"
CONFIG = {"bot": "tusk-bot", "control_repo": CONTROL, "allowed_users": ["alice"]}
SECRETS = {
    "TUSK_AGENT_TOKEN": "agent",
    "TUSK_READ_TOKEN": "read",
    "ANTHROPIC_API_KEY": "sk-ant-test-not-a-real-key",
    "GITHUB_TOKEN": "agent",
}
AGENT_SCRIPT = {
    "steps": [
        {
            "tool_use": {
                "name": "mcp__github__get_issue",
                "input": {"repo": "alice/widgets", "number": 1},
            }
        },
        {"expect": {"last_tool_result_contains": "Long report"}},
        {
            "tool_use": {
                "name": "mcp__github__create_comment",
                "input": {"repo": "alice/widgets", "number": 1, "body": "Read the whole report."},
            }
        },
        {"text": "Commented."},
    ],
    "conversations": [
        {
            "when_prompt_contains": "Self-check 3",
            "steps": [
                {
                    "tool_use": {
                        "name": "mcp__github__history",
                        "input": {"text": "read a long report"},
                    }
                },
                {"text": "Recorded."},
            ],
        }
    ],
}


def long_report() -> str:
    """~150 KB of text that gzip cannot shrink below the 48 KB shard size."""
    rng = random.Random(7)
    words = [
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
        for _ in range(4000)
    ]
    return "Long report\n\n" + " ".join(rng.choice(words) for _ in range(24000))


def scenario() -> dict[str, Any]:
    return {
        "users": [{"login": "alice"}, {"login": "tusk-bot"}],
        "tokens": {
            "bot-read": {
                "user": "tusk-bot",
                "scopes": ["notifications", "repo"],
                "read_only": True,
            },
            "dispatch": {"user": "alice", "scopes": ["repo"]},
            "agent": {"user": "tusk-bot", "scopes": ["repo", "delete_repo", "workflow"]},
            "read": {"user": "tusk-bot", "scopes": ["repo"], "read_only": True},
        },
        "repos": [
            {
                "name": "alice/widgets",
                "collaborators": {"tusk-bot": "write"},
                "files": {"README.md": "# Widgets\n"},
                "issues": [
                    {
                        "number": 1,
                        "author": "alice",
                        "title": "Please read this",
                        "body": long_report(),
                        "comments": [
                            {"author": "alice", "body": "@tusk-bot please read the report."}
                        ],
                    }
                ],
            },
            {"name": CONTROL, "private": True, "collaborators": {"tusk-bot": "write"}},
        ],
    }


def poll_once(api_url: str, config: Path) -> None:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", "/tmp"),
        "TUSK_BOT_TOKEN": "bot-read",
        "TUSK_DISPATCH_TOKEN": "dispatch",
        "TUSK_GITHUB_API_URL": api_url,
    }
    command = [sys.executable, "-m", "tusk.cli.main", "poll", "--once", "--config", str(config)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def test_repeated_shard_deliveries_make_exactly_one_completed_run(
    local_github: Any, scripted_model: Any, tmp_path: Path
) -> None:
    local_github.load(scenario())
    model_url = scripted_model.start(AGENT_SCRIPT)
    control = ControlRepo(tmp_path / "control", repo=CONTROL, config_text=yaml.safe_dump(CONFIG))
    poll_once(local_github.url, control.root / "tusk.yml")
    dispatches = local_github.dispatches()
    assert len(dispatches) >= 2, "the context should need several shards"
    assert {d["event_type"] for d in dispatches} == {"tusk-shard"}
    for dispatch in dispatches:
        assert len(json.dumps(dispatch["client_payload"])) < 64 * 1024

    # act plays one delivery at a time, so shard 0 (a watchdog) finds the job
    # incomplete and, with no wait configured, records it as lost; shard 0 again
    # adds to the same record; the last shard completes the job, whose run settles
    # the record; the last shard again finds the job taken and runs nothing.
    deliveries = [dispatches[0], dispatches[0], *dispatches[1:], dispatches[-1]]
    outcomes = []
    for run_id, dispatch in enumerate(deliveries, start=1):
        result = control.run(
            "repository_dispatch",
            {"action": "tusk-shard", "client_payload": dispatch["client_payload"]},
            workflow="agent.yml",
            api_url=local_github.url,
            secrets=SECRETS,
            env={"GITHUB_RUN_ID": str(run_id)},
            variables={"TUSK_ANTHROPIC_BASE_URL": model_url, "TUSK_SHARD_WAIT_SECONDS": "0"},
        )
        outcomes.append(result.ok)
        if run_id > 2:
            assert result.ok, result.stdout[-6000:] + result.stderr[-2000:]
    assert outcomes[:2] == [False, False]  # the watchdog's recorded failures fail their runs

    issues = local_github.state()["repos"][CONTROL]["issues"].values()
    logs = [i for i in issues if i["title"].startswith("[Agent Log] alice/widgets #1")]
    assert [(i["state"], i["state_reason"]) for i in logs] == [("closed", "completed")]
    records = [i for i in issues if "could not be merged" in i["title"]]
    assert [(i["state"], i["state_reason"]) for i in records] == [("closed", "completed")]
    log_url = f"/{CONTROL}/issues/{logs[0]['number']}"
    assert any(log_url in c["body"] for c in records[0]["comments"])
    comments = local_github.state()["repos"]["alice/widgets"]["issues"]["1"]["comments"]
    agent = [
        c for c in comments if c["author"] == "tusk-bot" and "<!-- tusk:status " not in c["body"]
    ]
    assert len([c for c in comments if "<!-- tusk:status " in c["body"]]) == 1  # Tusk's own, once
    assert [c["body"].split("\n")[0] for c in agent] == ["Read the whole report."]
