"""The scheduled poll under act: its conditional state survives from run to run in the
Actions cache, so an idle poll is a 304 that costs no rate limit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tusk.sandbox.act_runner import ControlRepo

CONTROL = "alice/tusk-control"
CONFIG = {"bot": "tusk-bot", "control_repo": CONTROL, "allowed_users": ["alice"]}
# No owner token: the poll dispatches with the workflow's own GITHUB_TOKEN.
SECRETS = {"TUSK_BOT_TOKEN": "bot-read", "GITHUB_TOKEN": "poll-workflow"}


def scenario() -> dict[str, Any]:
    return {
        "now": "2026-11-30T09:00:00Z",  # GitHub's clock moves only as the test lets it
        "users": [{"login": "alice"}, {"login": "tusk-bot"}, {"login": "github-actions[bot]"}],
        "tokens": {
            "bot-read": {"user": "tusk-bot", "scopes": ["notifications", "repo"]},
            "poll-workflow": {
                "user": "github-actions[bot]",
                "repository": CONTROL,
                "permissions": {"contents": "write"},
            },
        },
        "repos": [
            {
                "name": "alice/widgets",
                "issues": [
                    {
                        "number": 1,
                        "author": "alice",
                        "title": "Say hello",
                        "comments": [{"author": "alice", "body": "@tusk-bot please comment."}],
                    }
                ],
            },
            {"name": CONTROL, "private": True, "collaborators": {"tusk-bot": "write"}},
        ],
    }


@pytest.mark.act
@pytest.mark.slow
def test_scheduled_polls_keep_their_state_in_the_actions_cache(
    local_github: Any, tmp_path: Path
) -> None:
    local_github.load(scenario())
    control = ControlRepo(tmp_path / "control", repo=CONTROL, config_text=yaml.safe_dump(CONFIG))
    outputs = []
    for run_id in (101, 102, 103):  # the work, its own mark-read, then an idle poll
        local_github.advance(300)  # the schedule's five minutes, on GitHub's clock
        result = control.run(
            "schedule",
            {"schedule": "2-57/5 * * * *"},
            workflow="poll.yml",
            api_url=local_github.url,
            secrets=SECRETS,
            env={"GITHUB_RUN_ID": str(run_id)},
        )
        assert result.ok, result.stdout[-4000:] + result.stderr[-2000:]
        outputs.append(result.stdout)
    statuses = [  # the inbox listings (marking it read is a PUT on the same path)
        e["status"]
        for e in local_github.journal()
        if e["path"] == "/notifications" and e["method"] == "GET"
    ]
    assert statuses == [200, 200, 304]
    assert len(local_github.dispatches()) == 1
    # Saved after the two runs that changed it, restored by the next ones; not after the idle one.
    assert "Cache saved with key: tusk-poll-state-101-1" in outputs[0]
    assert "Cache restored from key: tusk-poll-state-101-1" in outputs[1]
    assert "Cache restored from key: tusk-poll-state-102-1" in outputs[2]
    assert "Cache saved with key: tusk-poll-state" not in outputs[2]
    # Tusk's venv is looked up in the cache first (here this checkout's own tusk runs,
    # so there is none to save; bench/bench_setup.py plays a fresh runner's install).
    assert all("Cache not found for input keys: tusk-venv-Linux-" in out for out in outputs)
