"""The pure parts of isolation: when it is mandatory, what the agent may reach,
and that no credential is written anywhere the agent can read."""

from __future__ import annotations

import base64
import json
import os
import pwd
import shutil
import stat
import tempfile
from pathlib import Path

import pytest
from pydantic import SecretStr

from tusk.steps.run_claude import runner_env
from tusk.steps.run_claude.box import folders as box_folders
from tusk.steps.run_claude.box import launch as box_launch
from tusk.steps.run_claude.box import principal as box_principal
from tusk.steps.run_claude.box import users as box_users
from tusk.steps.run_claude.session.command import claude_argv
from tusk.steps.run_claude.session.mcp_process import write_mcp_config
from tusk.steps.run_claude.workspace import clone as workspace_clone


def test_isolation_is_mandatory_under_actions() -> None:
    with pytest.raises(box_principal.IsolationError, match="not running as root"):
        box_users.decide(in_actions=True, euid=1001)


def test_outside_actions_without_root_isolation_is_off_and_says_why() -> None:
    decision = box_users.decide(in_actions=False, euid=1001)
    assert not decision.enabled and decision.reason.startswith("OFF: not root")


@pytest.mark.parametrize(
    ("environ", "required"),
    [
        ({"GITHUB_ACTIONS": "true"}, True),
        ({"GITHUB_ACTIONS": "true", "TUSK_LOCAL_DEMO": "1"}, True),  # not under act: no way out
        ({"GITHUB_ACTIONS": "true", "ACT": "true"}, True),  # act alone is still Actions
        ({"GITHUB_ACTIONS": "true", "ACT": "true", "TUSK_LOCAL_DEMO": "1"}, False),
        ({}, False),
    ],
)
def test_only_the_local_demo_under_act_may_run_without_isolation(
    environ: dict[str, str], required: bool
) -> None:
    assert runner_env.RunnerEnv.from_environ(environ).isolation_required is required


def test_root_isolates() -> None:
    assert box_users.decide(in_actions=True, euid=0).enabled


def test_agent_env_is_built_from_nothing_and_holds_no_secret(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TUSK_AGENT_TOKEN", "ghp_should_never_pass")
    monkeypatch.setenv("TUSK_JOB_TOKEN", "ghs_job_token_never_passes")  # the signing step's
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-real-key-never-passes")
    env = box_launch.agent_env(
        home=Path("/h"),
        tmp=Path("/t"),
        model_proxy_url="http://127.0.0.1:9",
        model_key="run-key",
        max_retries=0,
    )
    assert set(env) == {
        "HOME",
        "TMPDIR",
        "CLAUDE_CODE_TMPDIR",
        "PATH",
        "SHELL",
        "LANG",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_API_KEY",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
        "DISABLE_TELEMETRY",
        "CLAUDE_CODE_MAX_RETRIES",
    }
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
    assert env["ANTHROPIC_API_KEY"] == "run-key"
    assert env["TMPDIR"] == env["CLAUDE_CODE_TMPDIR"] == "/t"  # never /tmp/claude-<uid>
    assert "ghp_should_never_pass" not in env.values()
    assert "ghs_job_token_never_passes" not in env.values()
    assert "sk-ant-real-key-never-passes" not in env.values()


def test_a_fenced_agent_reaches_the_web_through_the_egress_proxy_and_loopback_directly() -> None:
    env = box_launch.agent_env(
        home=Path("/h"),
        tmp=Path("/t"),
        model_proxy_url="http://127.0.0.1:9",
        model_key="run-key",
        max_retries=0,
        egress_proxy_url="http://127.0.0.1:8",
    )
    assert env["HTTPS_PROXY"] == env["http_proxy"] == "http://127.0.0.1:8"
    assert "127.0.0.1" in env["NO_PROXY"].split(",")


def test_git_token_travels_in_gits_environment_only() -> None:
    env = workspace_clone.git_auth_env("http://127.0.0.1:8080/alice/w.git", SecretStr("tok-123456"))
    assert env["GIT_CONFIG_KEY_0"] == "http.http://127.0.0.1:8080/.extraHeader"
    header = env["GIT_CONFIG_VALUE_0"].removeprefix("Authorization: Basic ")
    assert base64.b64decode(header) == b"x-access-token:tok-123456"
    assert workspace_clone.git_auth_env("http://h/x.git", None) == {}


def test_credentials_in_a_clone_url_are_stripped() -> None:
    assert (
        workspace_clone.strip_credentials("https://x-access-token:abc@github.com:443/a/b.git")
        == "https://github.com:443/a/b.git"
    )


@pytest.mark.parametrize(
    "config",
    [
        '[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic xyz\n',
        '[remote "origin"]\n\turl = https://x-access-token:abc@github.com/a/b\n',
        "[credential]\n\thelper = store\n",
        "[x]\n\ty = tok-123456\n",
    ],
)
def test_any_credential_in_git_config_is_found(tmp_path: Path, config: str) -> None:
    path = tmp_path / "config"
    path.write_text(config)
    assert workspace_clone.credential_leaks(path, SecretStr("tok-123456")) is not None


def test_clean_git_config_passes(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text('[remote "origin"]\n\turl = https://github.com/a/b.git\n')
    assert workspace_clone.credential_leaks(path, SecretStr("tok-123456")) is None


def test_can_reach_follows_every_parent_directory(tmp_path: Path) -> None:
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    binary = closed / "claude"
    binary.write_text("#!/bin/sh\n")
    os.chmod(binary, 0o755)

    def stat_of(path: Path) -> os.stat_result:
        # Above the test's folder, pretend everything is open: only our bits count.
        return os.stat(path) if path in (closed, binary) else os.stat("/")

    stranger = 54321
    reach = dict(uid=stranger, gids=[stranger], need=os.X_OK, stat_of=stat_of)
    assert not box_folders.can_reach(binary, **reach)
    os.chmod(closed, 0o711)
    assert box_folders.can_reach(binary, **reach)
    os.chmod(binary, 0o700)
    assert not box_folders.can_reach(binary, **reach)
    assert box_folders.can_reach(binary, uid=0, gids=[0], need=os.X_OK)


def test_mcp_config_holds_the_url_and_this_runs_bearer_for_its_owner_alone(
    tmp_path: Path,
) -> None:
    me = box_users.current_principal()
    path = write_mcp_config(
        tmp_path / "mcp.json", "http://127.0.0.1:4242/mcp", bearer="s3cret", owner=me
    )
    assert path.is_absolute() and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text()) == {
        "mcpServers": {
            "github": {
                "type": "http",
                "url": "http://127.0.0.1:4242/mcp",
                "headers": {"Authorization": "Bearer s3cret"},
            }
        }
    }
    with pytest.raises(FileExistsError):  # never written over (another run's, a link)
        write_mcp_config(path, "http://127.0.0.1:1/mcp", bearer="x", owner=me)


def test_claude_command_line_carries_no_prompt_and_no_secret() -> None:
    argv = claude_argv(
        Path("/x/claude"),
        mcp_config=Path("/r/mcp.json"),
        builtin_tools=["Bash", "Read"],
        allowed_tools=["mcp__github__*", "Bash", "Read"],
        max_turns=60,
        model=None,
        resume="s-1",
    )
    assert argv == [
        "/x/claude",
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--mcp-config",
        "/r/mcp.json",
        "--strict-mcp-config",
        "--setting-sources",
        "",
        "--max-turns",
        "60",
        "--resume",
        "s-1",
        "--tools",
        "Bash,Read",
        "--allowedTools",
        "mcp__github__*",
        "Bash",
        "Read",
    ]


def test_history_command_line_disallows_every_other_server_tool() -> None:
    argv = claude_argv(
        Path("/x/claude"),
        mcp_config=Path("/r/mcp.json"),
        builtin_tools=[],
        allowed_tools=["mcp__github__history"],
        max_turns=3,
        disallowed_tools=["mcp__github__get_issue"],
    )
    assert argv[-6:] == [
        "--tools",
        "",
        "--allowedTools",
        "mcp__github__history",
        "--disallowedTools",
        "mcp__github__get_issue",
    ]


def test_runner_folder_others_may_only_traverse_is_closed_too() -> None:
    # 0711: the agent cannot list it but opens any file whose name it knows.
    nobody = pwd.getpwnam("nobody")
    user = box_principal.Principal("nobody", nobody.pw_uid, nobody.pw_gid, Path("/"))
    folder = Path(tempfile.mkdtemp(prefix="tusk-runner-temp-"))  # under a world-traversable /tmp
    try:
        (folder / "step.env").write_text("TOKEN=x\n")
        os.chmod(folder / "step.env", 0o644)
        os.chmod(folder, 0o711)
        assert box_folders.close_to_others([folder], user=user) == [folder]
        assert stat.S_IMODE(folder.stat().st_mode) == 0o710
    finally:
        shutil.rmtree(folder)


@pytest.mark.parametrize(
    ("environ", "key"),
    [
        ({"GITHUB_RUN_ID": "9876543210", "GITHUB_RUN_ATTEMPT": "2"}, "9876543210-2"),
        ({"GITHUB_RUN_ID": "12"}, "12-1"),
        ({"GITHUB_RUN_ID": "12; rm -rf /", "GITHUB_RUN_ATTEMPT": "1"}, "local"),
        ({}, "local"),
    ],
)
def test_a_run_is_keyed_by_run_id_and_attempt_never_by_job(
    environ: dict[str, str], key: str
) -> None:
    assert runner_env.RunnerEnv.from_environ(environ).run_key == key


def test_run_user_names_keep_run_key_and_suffix_within_useradds_limit() -> None:
    assert box_users.run_user_name("tusk-agent", "12-1", "a1b2c3") == "tusk-agent-12-1-a1b2c3"
    long = box_users.run_user_name("a-very-long-prefix-for-agents", "98765432101-3", "a1b2c3")
    assert len(long) == 32 and long.endswith("-98765432101-3-a1b2c3")
    assert box_users.run_user_name("9Bad Prefix!", "1-1", "abcdef") == "t9badprefix-1-1-abcdef"
