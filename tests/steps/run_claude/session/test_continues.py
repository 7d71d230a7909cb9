"""Which self-checks run, with which tools, and what they say."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tusk.git.agent import AgentGit
from tusk.steps.run_claude.session import continues
from tusk.steps.run_claude.writeup.outcome import Outcome

OK = Outcome(kind="completed", headline="Completed")
SERVER_TOOLS = ["mcp__github__get_issue", "mcp__github__create_comment", "mcp__github__history"]


def test_no_message_left_adds_the_first_continue() -> None:
    assert continues.plan(outcome=OK, messages_created=0) == ["message", "confirm", "history"]


def test_a_message_left_skips_the_first_continue() -> None:
    assert continues.plan(outcome=OK, messages_created=1) == ["confirm", "history"]


def test_after_a_loop_every_continue_is_still_asked() -> None:
    # A7: confirm and history "always"; the message when none was left.
    loop = Outcome(kind="loop", headline="Loop")
    assert continues.plan(outcome=loop, messages_created=0) == ["message", "confirm", "history"]
    timeout = Outcome(kind="timeout", headline="Time")
    assert continues.plan(outcome=timeout, messages_created=1) == ["confirm", "history"]


def test_after_an_api_error_nothing_is_asked() -> None:
    failed = Outcome(kind="api_error", headline="API")
    assert continues.plan(outcome=failed, messages_created=0) == []


def test_history_pass_allows_exactly_the_history_tool() -> None:
    flags = continues.tool_flags(
        "history",
        builtin_tools=["Bash", "Read"],
        server_tools=SERVER_TOOLS,
        server_pattern="mcp__github__*",
    )
    assert flags.builtin_tools == ()
    assert flags.allowed_tools == ("mcp__github__history",)
    assert flags.disallowed_tools == ("mcp__github__get_issue", "mcp__github__create_comment")


def test_other_passes_get_the_agent_tools() -> None:
    flags = continues.tool_flags(
        "confirm",
        builtin_tools=["Bash"],
        server_tools=SERVER_TOOLS,
        server_pattern="mcp__github__*",
    )
    assert flags.allowed_tools == ("mcp__github__*", "Bash") and flags.disallowed_tools == ()


def test_prompts_name_their_pass_and_the_facts() -> None:
    changed = continues.WorkspaceState(True, "2 uncommitted file(s)")
    text = continues.prompt(
        "confirm",
        trigger_url="https://x/1",
        workspace=changed,
        history_chars=300,
        branch_prefix="tusk/",
    )
    assert text.startswith("Self-check 2: confirm the work.")
    assert "2 uncommitted file(s)" in text and "`tusk/`" in text
    history = continues.prompt(
        "history",
        trigger_url="https://x/1",
        workspace=changed,
        history_chars=300,
        branch_prefix="tusk/",
    )
    assert "mcp__github__history" in history and "at most 300 characters" in history
    message = continues.prompt(
        "message",
        trigger_url="https://x/1",
        workspace=changed,
        history_chars=300,
        branch_prefix="tusk/",
    )
    assert "https://x/1" in message and "mcp__github__create_comment" in message


def test_workspace_state_sees_uncommitted_and_unpushed_work(tmp_path: Path) -> None:
    upstream = tmp_path / "up"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@e", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q", str(upstream)], check=True, env=env)
    (upstream / "f").write_text("1")
    subprocess.run([*git, "-C", str(upstream), "add", "f"], check=True, env=env)
    subprocess.run([*git, "-C", str(upstream), "commit", "-qm", "one"], check=True, env=env)
    work = tmp_path / "work"
    subprocess.run(["git", "clone", "-q", str(upstream), str(work)], check=True, env=env)
    assert continues.workspace_state(AgentGit(work)) == continues.WorkspaceState(
        False, "no changes"
    )
    (work / "f").write_text("2")
    assert continues.workspace_state(AgentGit(work)).summary == "1 uncommitted file(s)"
    subprocess.run([*git, "-C", str(work), "commit", "-qam", "two"], check=True, env=env)
    state = continues.workspace_state(AgentGit(work))
    assert state.has_changes and "1 commit(s)" in state.summary
    assert not continues.workspace_state(AgentGit(tmp_path / "nothing")).has_changes


def test_staged_messages_count_as_left(tmp_path: Path) -> None:
    from tusk.audit.chain import AuditLog, read_records

    log = AuditLog(tmp_path / "audit.jsonl")
    log.append(tool="get_issue", kind="read", target="a/b", args={}, decision="allowed")
    log.append(
        tool="create_comment",
        kind="write",
        target="a/b#1",
        args={},
        decision="refused",
        code="LIMIT_EXCEEDED",
        reason="x",
    )
    assert continues.messages_left(read_records(tmp_path / "audit.jsonl")) == 0
    log.append(
        tool="create_comment",
        kind="write",
        target="a/b#1",
        args={"b": 1},
        decision="staged",
        reason="comment",
        created="comment",  # what the server's staged record says the write would make
    )
    assert continues.messages_left(read_records(tmp_path / "audit.jsonl")) == 1


def test_the_agents_git_configuration_never_runs_as_the_supervisor(agent_user: str) -> None:
    """core.fsmonitor runs a command on every `git status`: the supervisor (root under
    isolation) looks at the agent's workspace only through git run as the agent."""
    import os
    import shutil
    import tempfile

    from tusk.steps.run_claude.box import users as box_users
    from tusk.steps.run_claude.workspace import clone as workspace_clone

    agent = box_users.ensure_user(agent_user)
    base = Path(tempfile.mkdtemp(prefix="tusk-fsmonitor-"))
    os.chmod(base, 0o711)
    work = base / "work"
    try:
        env = {"PATH": "/usr/bin:/bin", "HOME": str(base), "GIT_CONFIG_NOSYSTEM": "1"}
        subprocess.run(["git", "init", "-q", str(work)], check=True, env=env)
        out = base / "out"  # the agent's own, outside the workspace
        out.mkdir()
        os.chown(out, agent.uid, agent.gid)
        canary = out / "ran-as"
        subprocess.run(
            ["git", "-C", str(work), "config", "core.fsmonitor", f"id -u > {canary}; false"],
            check=True,
            env=env,
        )
        (work / "f").write_text("1")
        workspace_clone.chown_tree(work, agent)
        state = continues.workspace_state(AgentGit(work, uid=agent.uid, gid=agent.gid))
        assert state.summary == "1 uncommitted file(s)"
        assert canary.read_text().strip() == str(agent.uid)  # never "0"
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_git_in_the_workspace_runs_as_the_named_agent_not_as_the_paths_owner(
    tmp_path: Path,
) -> None:
    """The agent owns its home and could re-point the folders above its workspace at one
    owned by root or the runner; git there still runs as the agent."""
    from tusk.steps.run_claude.box import folders as box_folders
    from tusk.steps.run_claude.box import launch as box_launch
    from tusk.steps.run_claude.box import principal as box_principal

    dirs = box_folders.run_dirs(tmp_path)  # root-owned here, whatever the path says
    agent = box_principal.Principal("tusk-agent", 4242, 4343, tmp_path)
    git = box_launch.agent_git(dirs, agent, None)
    assert (git.workspace, git.uid, git.gid) == (dirs.workspace, 4242, 4343)
    assert box_launch.agent_git(dirs, None, None).uid is None  # no isolation: as this process


def test_status_paths_are_read_nul_separated() -> None:
    out = "?? new\nline.txt\0R  moved.txt\0old.txt\0 M a b.txt\0"
    assert continues.changed_paths(out) == ["new\nline.txt", "moved.txt", "a b.txt"]
    assert continues.changed_paths("") == []
