"""The agent's workspace: the repository cloned as the runner with the read token in
git's environment only, proved free of any credential, then handed to the agent."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from pydantic import SecretStr

from tusk.git.env import basic_auth_header, config_env
from tusk.steps.run_claude.box.principal import SAFE_PATH, IsolationError, Principal

# --------------------------------------------------------------------------- workspace


def git_auth_env(clone_url: str, token: SecretStr | None) -> dict[str, str]:
    """git's own environment for one authenticated command: nothing lands in .git/config
    and nothing appears in argv."""
    if token is None:
        return {}
    parts = urlsplit(clone_url)
    origin = urlunsplit((parts.scheme, parts.netloc, "/", "", ""))
    return config_env([(f"http.{origin}.extraHeader", basic_auth_header(token.get_secret_value()))])


def strip_credentials(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def clone_workspace(
    *,
    clone_url: str,
    token: SecretStr | None,
    dest: Path,
    runner: Principal,
    agent: Principal | None,
    committer: str,
) -> None:
    """Clone as the runner, prove no credential was kept, then hand it to the agent."""
    clean_url = strip_credentials(clone_url)
    env = {
        "PATH": SAFE_PATH,
        "HOME": str(dest.parent),  # no runner ~/.gitconfig, no credential helper
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_CONFIG_NOSYSTEM": "1",
        **git_auth_env(clean_url, token),
    }
    as_runner = runner.uid != os.getuid()
    if as_runner:
        os.chown(dest, runner.uid, runner.gid)
    completed = subprocess.run(
        ["git", "clone", "--quiet", "--no-tags", "--", clean_url, str(dest)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        user=runner.uid if as_runner else None,  # None: stay this process's user
        group=runner.gid if as_runner else None,
    )
    if completed.returncode != 0:
        raise IsolationError(
            f"Could not clone {clean_url} into the agent's workspace",
            f"git said: {completed.stderr.strip()[-800:]}",
        )
    # --file: no repository discovery, so no "dubious ownership" refusal as root.
    local = ["git", "config", "--file", str(dest / ".git" / "config")]
    settings = [
        ("user.name", committer),
        ("user.email", f"{committer}@users.noreply.github.com"),
        ("remote.origin.url", clean_url),
    ]
    for key, value in settings:
        subprocess.run(
            [*local, key, value], env={"PATH": SAFE_PATH}, check=True, capture_output=True
        )
    leaked = credential_leaks(dest / ".git" / "config", token)
    if leaked:
        raise IsolationError(
            "A credential was left in the workspace's git config", f"Found: {leaked}"
        )
    if agent is not None:
        chown_tree(dest, agent)
        os.chmod(dest, 0o700)  # the agent's alone: push_branch bundles it as the agent


def credential_leaks(config: Path, token: SecretStr | None) -> str | None:
    text = config.read_text(encoding="utf-8", errors="replace")
    lowered = text.lower()
    if token is not None and token.get_secret_value() in text:
        return "the token itself"
    for needle in ("extraheader", "authorization", "x-access-token", "credential"):
        if needle in lowered:
            return needle
    return None


def chown_tree(root: Path, user: Principal) -> None:
    os.chown(root, user.uid, user.gid)
    for folder, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            os.chown(os.path.join(folder, name), user.uid, user.gid, follow_symlinks=False)
