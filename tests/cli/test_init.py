"""``tusk init``: a ready control repository, and its callers run as written under
act against the local GitHub (poll → agent run, and go-away)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tusk.cli.main import main as tusk_main
from tusk.contracts.config import load_settings
from tusk.sandbox.act_runner import ControlRepo

ROOT = Path(__file__).resolve().parents[2]
CONTROL = "alice/tusk-control"
TUSK_REF = "alice/tusk@v3"
ARGS = ["--tusk-ref", TUSK_REF, "--bot", "tusk-bot", "--control-repo", CONTROL]
ARGS += ["--allowed-user", "alice", "--allowed-user", "carol"]


def init(folder: Path, *extra: str) -> int:
    return tusk_main(["init", str(folder), *ARGS, *extra])


def test_init_writes_three_callers_a_checked_config_and_the_secrets_list(tmp_path: Path) -> None:
    assert init(tmp_path / "control") == 0
    control = tmp_path / "control"
    written = sorted(str(p.relative_to(control)) for p in control.rglob("*") if p.is_file())
    assert written == [
        ".github/workflows/agent.yml",
        ".github/workflows/go-away.yml",
        ".github/workflows/poll.yml",
        "TUSK-SECRETS.md",
        "tusk.yml",
    ]
    settings = load_settings(tmp_path / "control" / "tusk.yml")
    assert (settings.bot, settings.control_repo) == ("tusk-bot", CONTROL)
    assert settings.allowed_users == ("alice", "carol")
    assert tusk_main(["config", "check", str(tmp_path / "control" / "tusk.yml")]) == 0
    # Every key is there with its comment, so the file documents itself.
    config_text = (tmp_path / "control" / "tusk.yml").read_text()
    assert "#   max_turns: 60" in config_text and "# Claude Code --max-turns" in config_text
    # The few keys a deployment sets, readable: no internal ids, no long lines.
    assert len(config_text.splitlines()) <= 20
    assert max(len(line) for line in config_text.splitlines()) <= 100
    assert not re.search(r"\([A-Z]\d", config_text)
    # Uncommenting an often-changed key gives valid settings.
    uncommented = config_text.replace("# limits:", "limits:").replace(
        "#   max_turns", "  max_turns"
    )
    (tmp_path / "control" / "tusk.yml").write_text(uncommented)
    assert load_settings(tmp_path / "control" / "tusk.yml").limits.max_turns == 60


def test_callers_call_the_reusable_workflows_at_the_given_release(tmp_path: Path) -> None:
    assert init(tmp_path) == 0
    workflows = tmp_path / ".github" / "workflows"
    calls = {}
    for name in ("agent.yml", "poll.yml", "go-away.yml"):
        workflow = yaml.safe_load((workflows / name).read_text())
        assert workflow["permissions"] == {"contents": "read"}
        (job,) = workflow["jobs"].values()
        calls[name] = job["uses"]
        # The jobs that sign their audit records (agent, undo, apply) get the OIDC
        # token and the attestations API from the calling job; the poller gets nothing more.
        signs = {"contents": "read", "id-token": "write", "attestations": "write"}
        poll = {"contents": "write"}  # its state branch
        assert job.get("permissions") == (signs if name != "poll.yml" else poll), name
    assert calls == {
        "agent.yml": "alice/tusk/.github/workflows/tusk-agent.yml@v3",
        "poll.yml": "alice/tusk/.github/workflows/tusk-poll.yml@v3",
        "go-away.yml": "alice/tusk/.github/workflows/tusk-go-away.yml@v3",
    }
    poll = yaml.safe_load((workflows / "poll.yml").read_text())
    # Off :00, GitHub's documented peak where "some queued jobs may be dropped".
    assert poll[True]["schedule"] == [{"cron": "2-57/5 * * * *"}]  # `on` reads as True
    assert "workflow_dispatch" in poll[True]


def test_the_secrets_list_names_every_secret_the_workflows_need(tmp_path: Path) -> None:
    assert init(tmp_path) == 0
    checklist = (tmp_path / "TUSK-SECRETS.md").read_text()
    for path in (ROOT / ".github" / "workflows").glob("tusk-*.yml"):
        secrets = yaml.safe_load(path.read_text())[True]["workflow_call"]["secrets"]
        for name in secrets:
            assert f"`{name}`" in checklist, f"{name} ({path.name}) is missing"
    assert "tusk doctor" in checklist
    assert "gh secret set" in checklist


def test_init_never_overwrites_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "tusk.yml").write_text("bot: mine\n")
    assert init(tmp_path) == 1
    assert "already exist: tusk.yml" in capsys.readouterr().err
    assert (tmp_path / "tusk.yml").read_text() == "bot: mine\n"
    assert not (tmp_path / ".github").exists()  # nothing at all was written
    assert init(tmp_path, "--force") == 0
    assert load_settings(tmp_path / "tusk.yml").bot == "tusk-bot"


def test_init_reports_every_bad_value_in_the_flags_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["init", str(tmp_path), "--tusk-ref", "alice/tusk", "--bot", "bad.bot"]
    argv += ["--control-repo", "nope", "--allowed-user", "alice"]
    assert tusk_main(argv) == 1
    err = capsys.readouterr().err
    assert "'bad.bot' is not a GitHub login" in err
    assert "--control-repo 'nope' is not OWNER/REPO" in err
    assert tusk_main(["init", str(tmp_path), *ARGS[:1], "alice/tusk", *ARGS[2:]]) == 1
    assert "is not OWNER/REPO@REF" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- under act

SCRIPT = {
    "steps": [
        {
            "tool_use": {
                "name": "mcp__github__create_comment",
                "input": {"repo": "alice/widgets", "number": 1, "body": "Done, as asked."},
            }
        },
        {"text": "Commented."},
    ],
    "conversations": [
        {
            "when_prompt_contains": "Self-check 3",
            "steps": [
                {"tool_use": {"name": "mcp__github__history", "input": {"text": "commented"}}},
                {"text": "Recorded."},
            ],
        }
    ],
}


def scenario() -> dict[str, Any]:
    return {
        "users": [
            {"login": "alice"},
            {"login": "bob"},
            {"login": "tusk-bot"},
            {"login": "github-actions[bot]"},
        ],
        "tokens": {
            "bot-read": {"user": "tusk-bot", "scopes": ["notifications", "repo"]},
            "dispatch": {"user": "alice", "scopes": ["repo"]},
            # The poll workflow's own GITHUB_TOKEN (the callers grant contents: write).
            "poll-workflow": {
                "user": "github-actions[bot]",
                "repository": CONTROL,
                "permissions": {"contents": "write"},
            },
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
                        "title": "Say hello",
                        "body": "A small task.",
                        "comments": [{"author": "alice", "body": "@tusk-bot please comment."}],
                    }
                ],
            },
            {
                "name": "bob/gadgets",
                "files": {"README.md": "# Gadgets\n"},
                "issues": [
                    {
                        "number": 4,
                        "author": "bob",
                        "title": "Not here",
                        "body": "Nothing.",
                        "comments": [{"author": "bob", "body": "@tusk-bot go away"}],
                    }
                ],
            },
            {
                "name": CONTROL,
                "private": True,
                "collaborators": {"tusk-bot": "write"},
                "labels": ["workflow", "bug"],
            },
        ],
    }


@pytest.mark.act
@pytest.mark.e2e
@pytest.mark.slow
def test_init_callers_run_under_act_against_the_local_github(
    local_github: Any, scripted_model: Any, tmp_path: Path
) -> None:
    local_github.load(scenario())
    model_url = scripted_model.start(SCRIPT)
    folder = tmp_path / "control"
    # As a user would: the command, in its own process.
    command = [sys.executable, "-m", "tusk.cli.main", "init", str(folder), *ARGS]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    config = yaml.safe_load((folder / "tusk.yml").read_text())
    config["go_away"] = {"delete_pause_seconds": 0}  # no real sleeps in tests
    (folder / "tusk.yml").write_text(yaml.safe_dump(config))
    control = ControlRepo(folder, repo=CONTROL, tusk_ref=TUSK_REF, existing=True)

    polled = control.run(
        "workflow_dispatch",
        {"inputs": {}},
        workflow="poll.yml",
        api_url=local_github.url,
        # No owner token: the poll dispatches with the workflow's own GITHUB_TOKEN.
        secrets={"TUSK_BOT_TOKEN": "bot-read", "GITHUB_TOKEN": "poll-workflow"},
    )
    assert polled.ok, polled.stdout[-4000:] + polled.stderr[-2000:]
    assert f"LocalRepositoryCache matched https://github.com/{TUSK_REF.split('@')[0]}" in (
        polled.stdout
    )
    dispatches = local_github.dispatches()
    assert sorted(d["event_type"] for d in dispatches) == ["tusk-go-away", "tusk-shard"]
    assert {d["token"] for d in dispatches} == {"poll-workflow"}

    secrets = {
        "TUSK_AGENT_TOKEN": "agent",
        "TUSK_READ_TOKEN": "read",
        "ANTHROPIC_API_KEY": "sk-ant-test-not-a-real-key",
        "GITHUB_TOKEN": "agent",
    }
    for run_id, dispatch in enumerate(dispatches, start=1):
        go_away = dispatch["event_type"] == "tusk-go-away"
        result = control.run(
            "repository_dispatch",
            {"action": dispatch["event_type"], "client_payload": dispatch["client_payload"]},
            workflow="go-away.yml" if go_away else "agent.yml",
            api_url=local_github.url,
            secrets=secrets,
            env={"GITHUB_RUN_ID": str(run_id), "TUSK_LOCAL_DEMO": "1"},
            variables={"TUSK_ANTHROPIC_BASE_URL": model_url},
        )
        assert result.ok, result.stdout[-6000:] + result.stderr[-2000:]

    state = local_github.state()["repos"]
    issues = state[CONTROL]["issues"].values()
    logs = [i for i in issues if i["title"].startswith("[Agent Log] alice/widgets #1")]
    assert [(i["state"], i["state_reason"]) for i in logs] == [("closed", "completed")]
    comments = state["alice/widgets"]["issues"]["1"]["comments"]
    # The agent's comment, and Tusk's own status comment that ends with the outcome.
    mine = [c["body"] for c in comments if c["author"] == "tusk-bot"]
    status = [body for body in mine if body.startswith("<!-- tusk:status ")]
    assert [body.split("\n")[0] for body in mine if body not in status] == ["Done, as asked."]
    assert len(status) == 1 and "✅ **Done: Completed**" in status[0]
    go_aways = [i for i in issues if "go away" in i["title"]]
    assert [(i["state"], i["state_reason"]) for i in go_aways] == [("closed", "not_planned")]
    assert os.path.islink(folder / ".tusk-published" / "actions")  # this checkout, as alice/tusk

    # "@bot undo" from the requester: the caller runs the undo step for tusk-undo.
    asked = local_github.gateway("dispatch").post(  # alice's token
        "/repos/alice/widgets/issues/1/comments", json={"body": "@tusk-bot undo"}
    )
    assert asked.status == 201
    undo = {
        "action": "tusk-undo",
        "client_payload": {
            "jobid": "alice-widgets-undo-1",
            "actor": "alice",
            "repo": "alice/widgets",
            "trust_level": "owner",
            "trust_source": "repository_owner",
            "comment_id": str(asked.body["id"]),
            "comment_url": asked.body["html_url"],
            "comment_type": "issue_comment",
            "timestamp": "2026-12-01T00:00:00Z",
        },
    }
    result = control.run(
        "repository_dispatch",
        undo,
        workflow="go-away.yml",
        api_url=local_github.url,
        secrets=secrets,
        env={"GITHUB_RUN_ID": "9"},
    )
    assert result.ok, result.stdout[-6000:] + result.stderr[-2000:]
    comments = local_github.state()["repos"]["alice/widgets"]["issues"]["1"]["comments"]
    assert [c for c in comments if c["author"] == "tusk-bot"] == []  # the run's writes, gone
    assert "@tusk-bot undo" in [c["body"] for c in comments]


def test_every_text_says_claude_code_holds_no_secret() -> None:
    """The model key is the model proxy's; no page may call it Claude Code's own."""
    from pathlib import Path

    from tusk.cli.init import RELEASE, control_files

    root = Path(__file__).resolve().parents[2]
    checklist = control_files(
        tusk_ref=RELEASE, bot="my-bot", control_repo="me/tusk-control", allowed_users=["me"]
    )["TUSK-SECRETS.md"]
    texts = {
        "TUSK-SECRETS.md": checklist,
        "README.md": (root / "README.md").read_text(encoding="utf-8"),
        "tusk-agent.yml": (root / ".github/workflows/tusk-agent.yml").read_text(encoding="utf-8"),
    }
    for name, text in texts.items():
        assert "only secret" not in text, name
    assert "Claude Code itself holds no secret" in checklist
