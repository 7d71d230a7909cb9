"""push_branch against a hostile agent, through the real server over streamable HTTP.

The server never lets git, running as itself, open the agent's workspace: the agent's
side makes a bundle as the agent's own user, and the server checks and imports it. Each
test checks the tool's answer and that nothing reached the bot's fork.

Tests with a separate agent user need root to create it: CI runs as root; elsewhere they
skip and say why.
"""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.mcp_harness import agent_session, scenario
from tests.mcp.server.test_server import fork_branches, git, make_workspace
from tests.root import require_root as _require_root
from tusk.audit import chain as audit

pytestmark = pytest.mark.anyio

AGENT_USER = f"tusk-push-agent-{os.getpid()}"
SECRET_TEXT = "the control repository's private notes"


def require_root() -> None:
    _require_root("these tests (they create a separate agent user)")


@pytest.fixture(scope="module")
def agent_uid() -> Iterator[tuple[int, int]]:
    require_root()
    from tusk.steps.run_claude.box import users as box_users

    try:
        pwd.getpwnam(AGENT_USER)
        created = False
    except KeyError:
        created = True
    user = box_users.ensure_user(AGENT_USER)
    yield user.uid, user.gid
    if created:
        subprocess.run(["userdel", "--remove", AGENT_USER], capture_output=True, check=False)


@pytest.fixture
def reachable(tmp_path: Path) -> Iterator[Path]:
    """A folder the agent user can pass through (pytest's own is root's alone)."""
    base = Path(tempfile.mkdtemp(prefix="tusk-push-test-"))
    os.chmod(base, 0o711)
    yield base
    shutil.rmtree(base, ignore_errors=True)


def give_to(path: Path, uid: int, gid: int) -> None:
    for root, dirs, files in os.walk(path):
        os.chown(root, uid, gid)
        for name in [*dirs, *files]:
            os.chown(os.path.join(root, name), uid, gid, follow_symlinks=False)


def private_repo(base: Path) -> tuple[Path, str]:
    """A repository only root can read (the control repository's checkout, say), with a
    commit the agent must never be able to push."""
    folder = base / "control"
    folder.mkdir(mode=0o700)
    repo = folder / "repo"
    git(["init", "--quiet", "-b", "main", str(repo)], folder)
    (repo / "notes.txt").write_text(SECRET_TEXT + "\n")
    git(["add", "-A"], repo)
    git(["-c", "user.name=x", "-c", "user.email=x@x", "commit", "--quiet", "-m", "private"], repo)
    return repo, git(["rev-parse", "HEAD"], repo).strip()


def fork_holds(local_github: Any, text: str) -> bool:
    """Whether any branch of the bot's fork serves ``text`` in a file (what a push published)."""
    state = local_github.state()["repos"].get("tusk-bot/widgets")
    return state is not None and text in repr(state)


async def test_a_symlinked_ref_into_an_unreadable_repository_pushes_nothing(
    start_mcp, local_github, tmp_path, reachable, agent_uid
) -> None:
    """The agent plants refs/heads/tusk/steal as a symlink to the private repository's
    branch, and an alternates file pointing at its objects. git as the server would read
    both; git as the agent cannot."""
    local_github.load(scenario(with_fork=True))
    secret_repo, secret_sha = private_repo(reachable)
    work = make_workspace(local_github, reachable)
    heads = work / ".git" / "refs" / "heads" / "tusk"
    heads.mkdir(parents=True, exist_ok=True)
    (heads / "steal").symlink_to(secret_repo / ".git" / "refs" / "heads" / "main")
    (work / ".git" / "objects" / "info" / "alternates").write_text(
        f"{secret_repo / '.git' / 'objects'}\n"
    )
    give_to(work, *agent_uid)
    running = start_mcp(workspace=work)
    start = len(local_github.journal())
    async with agent_session(running.url) as agent:
        text = await agent.refused("push_branch", "PUSH_FAILED", branch="tusk/steal")
        assert "could not take branch 'tusk/steal' from your workspace" in text
        # The branch the agent really made still goes through, from the same workspace.
        await agent.ok("push_branch", branch="tusk/fix")
    assert "tusk/steal" not in fork_branches(local_github)
    assert not fork_holds(local_github, SECRET_TEXT)
    pushes = [e for e in local_github.journal()[start:] if "git-receive-pack" in e["path"]]
    assert len([e for e in pushes if e["method"] == "POST"]) == 1  # only tusk/fix
    assert secret_sha not in repr(local_github.state()["repos"]["tusk-bot/widgets"])


async def test_alternates_alone_cannot_lend_the_agent_unreadable_objects(
    start_mcp, local_github, reachable, agent_uid
) -> None:
    """A ref file the agent writes itself, naming a commit that only the unreadable
    repository holds, reached through objects/info/alternates."""
    local_github.load(scenario(with_fork=True))
    secret_repo, secret_sha = private_repo(reachable)
    work = make_workspace(local_github, reachable)
    (work / ".git" / "objects" / "info" / "alternates").write_text(
        f"{secret_repo / '.git' / 'objects'}\n"
    )
    (work / ".git" / "refs" / "heads" / "tusk" / "borrowed").write_text(secret_sha + "\n")
    give_to(work, *agent_uid)
    running = start_mcp(workspace=work)
    async with agent_session(running.url) as agent:
        await agent.refused("push_branch", "PUSH_FAILED", branch="tusk/borrowed")
    assert "tusk/borrowed" not in fork_branches(local_github)
    assert not fork_holds(local_github, SECRET_TEXT)


async def test_a_workspace_of_another_user_is_bundled_as_that_user(
    start_mcp, local_github, reachable, agent_uid
) -> None:
    local_github.load(scenario(with_fork=True))
    work = make_workspace(local_github, reachable)
    give_to(work, *agent_uid)
    os.chmod(work, 0o700)  # the agent's own; the server could not even list it as itself
    running = start_mcp(workspace=work)
    async with agent_session(running.url) as agent:
        await agent.ok("push_branch", branch="tusk/fix")
    assert running.pusher.source.uid == agent_uid[0]
    assert "tusk/fix" in fork_branches(local_github)


# --------------------------------------------------------------------------- hostile bundles


class Handed:
    """The agent's side as a tampered one could answer: any bytes at all."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.asked: list[tuple[str, list[str]]] = []

    def bundle(self, branch: str, exclude: Sequence[str]) -> bytes:
        self.asked.append((branch, list(exclude)))
        return self.data


def real_bundle(work: Path, *revs: str) -> bytes:
    return subprocess.run(
        ["git", "bundle", "create", "--quiet", "-", *revs],
        cwd=work,
        capture_output=True,
        check=True,
    ).stdout


def with_header(data: bytes, header: bytes) -> bytes:
    return header + data[data.index(b"\n\n") :]


def upstream_sha(work: Path) -> str:
    return git(["rev-parse", "origin/main"], work).strip()


HOSTILE: dict[str, Any] = {
    "not a bundle": lambda work: b"#!/bin/sh\nrm -rf /\n",
    "an extra ref": lambda work: real_bundle(work, "refs/heads/tusk/fix", "refs/heads/main"),
    "another branch": lambda work: real_bundle(work, "refs/heads/main"),
    "a partial bundle": lambda work: with_header(
        real_bundle(work, "refs/heads/tusk/fix"),
        b"# v3 git bundle\n@object-format=sha1\n@filter=blob:none\n"
        + f"{git(['rev-parse', 'tusk/fix'], work).strip()} refs/heads/tusk/fix".encode(),
    ),
    "a prerequisite not offered": lambda work: real_bundle(
        work, "refs/heads/tusk/fix", "^tusk/fix~1"
    ),
    "objects missing": lambda work: (
        lambda whole: whole[: whole.index(b"PACK") + 12]  # the pack's header alone
    )(real_bundle(work, "refs/heads/tusk/fix")),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
async def test_anything_but_plain_objects_and_one_ref_is_refused(
    start_mcp, local_github, tmp_path, kind: str
) -> None:
    local_github.load(scenario(with_fork=True))
    work = make_workspace(local_github, tmp_path)
    git(["commit", "--quiet", "--allow-empty", "-m", "second"], work)
    source = Handed(HOSTILE[kind](work))
    running = start_mcp(source=source)
    async with agent_session(running.url) as agent:
        text = await agent.refused("push_branch", "INVALID_PUSH", branch="tusk/fix")
    assert "not plain git objects and one branch" in text
    assert source.asked == [("tusk/fix", [upstream_sha(work)])]
    assert "tusk/fix" not in fork_branches(local_github)
    [record] = audit.read_records(running.audit_path)
    assert (record.decision, record.code) == ("refused", "INVALID_PUSH")


async def test_a_plain_bundle_from_the_agents_side_is_pushed(
    start_mcp, local_github, tmp_path
) -> None:
    local_github.load(scenario(with_fork=True))
    work = make_workspace(local_github, tmp_path)
    source = Handed(real_bundle(work, "refs/heads/tusk/fix", f"^{upstream_sha(work)}"))
    running = start_mcp(source=source)
    async with agent_session(running.url) as agent:
        await agent.ok("push_branch", branch="tusk/fix")
    assert "tusk/fix" in fork_branches(local_github)


# --------------------------------------------------------------------------- paths and secrets


@pytest.mark.parametrize(
    "name",
    [".github/workflows/évil.yml", ".github/workflows/tab\tname.yml", '.github/workflows/"q".yml'],
)
async def test_workflow_paths_git_would_quote_are_still_refused(
    start_mcp, local_github, tmp_path, name: str
) -> None:
    """Without -z git prints these quoted ("\\303\\251vil.yml"), and a prefix check passes."""
    local_github.load(scenario(with_fork=True))
    work = make_workspace(local_github, tmp_path, files={name: "on: push\njobs: {}\n"})
    running = start_mcp(workspace=work)
    async with agent_session(running.url) as agent:
        text = await agent.refused("push_branch", "FORBIDDEN_OPERATION", branch="tusk/fix")
    assert "workflow files" in text
    assert "tusk/fix" not in fork_branches(local_github)


TOKEN = "ghp_" + "Z" * 36


def commit_as(work: Path, *config: str, files: dict[str, bytes] | None = None) -> None:
    for name, data in (files or {"more.txt": b"more\n"}).items():
        (work / name).write_bytes(data)
    git(["add", "-A"], work)
    git([*(a for c in config for a in ("-c", c)), "commit", "--quiet", "-m", "more"], work)


SECRET_PUSHES: dict[str, Any] = {
    "a binary file": lambda w: commit_as(
        w, files={"logo.png": b"\x89PNG\r\n\x1a\n\x00\x00" + TOKEN.encode() + b"\xff\x00"}
    ),
    "a file name": lambda w: commit_as(w, files={f"{TOKEN}.txt": b"hello\n"}),
    # Wide text: no ASCII run of the token in the bytes, only in the text they encode.
    "a UTF-16 file": lambda w: commit_as(
        w, files={"notes.txt": ("token: " + TOKEN + "\n").encode("utf-16")}
    ),
    "a UTF-32 file without a byte order mark": lambda w: commit_as(
        w, files={"notes.txt": ("token: " + TOKEN + "\n").encode("utf-32-le")}
    ),
    "the author's name": lambda w: commit_as(w, f"user.name={TOKEN}"),
    "the committer's e-mail": lambda w: commit_as(w, f"user.email={TOKEN}@example.test"),
}


@pytest.mark.parametrize("where", sorted(SECRET_PUSHES))
async def test_a_secret_anywhere_in_the_push_is_refused(
    start_mcp, local_github, tmp_path, where: str
) -> None:
    local_github.load(scenario(with_fork=True))
    work = make_workspace(local_github, tmp_path)
    SECRET_PUSHES[where](work)
    running = start_mcp(workspace=work)
    async with agent_session(running.url) as agent:
        text = await agent.refused("push_branch", "SECRET_IN_BODY", branch="tusk/fix")
    assert TOKEN not in text
    assert "tusk/fix" not in fork_branches(local_github)
    assert TOKEN not in running.audit_path.read_text()


def test_the_workspace_is_not_opened_when_it_belongs_to_someone_else(tmp_path: Path) -> None:
    """Without root, git cannot become the workspace's owner, so it is not run at all."""
    from tusk.git.agent import AgentGit, BundleError

    if os.geteuid() == 0:
        work = tmp_path / "w"
        work.mkdir()
        os.chown(work, 65534, 65534)
        assert AgentGit.as_owner(work).uid == 65534  # root: it becomes that user
        return
    with pytest.raises(BundleError, match="belongs to uid 0"):
        AgentGit.as_owner(Path("/root"))
    assert stat.S_ISDIR(os.lstat("/root").st_mode)
