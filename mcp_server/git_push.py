"""``push_branch``: get the agent's work from its workspace onto the bot's fork.

Git runs in the server's process, never in the agent's: the branch is first
fetched out of the workspace into a private bare repository (so no hook,
config or credential helper the agent planted can run with our token), the
files it changes are checked there, and the push goes from there to the
fork. The token reaches git only through the environment of that one git
process (``GIT_CONFIG_*`` → ``http.extraHeader``): never an argument (argv is
world-readable), never a file, never the workspace's ``.git/config``.

The push refspec always names a source, so it can never delete a branch; it
carries ``+`` (force) only for a branch this run created.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tusk.mcp_server import policy
from tusk.mcp_server.policy import PolicyConfig, RunState
from tusk.mcp_server.runtime import OperationFailed, WriteOutcome

from tusk.forks import find_fork
from tusk.git_env import basic_auth_header, config_env
from tusk.github import Gateway, NotFound

GIT_TIMEOUT = 300.0
FIRST_WAIT = 0.5
LONGEST_WAIT = 15.0


class PushFailed(OperationFailed):
    """Git or the fork did not cooperate; the message says what to do."""

    code = "PUSH_FAILED"


@dataclass(frozen=True)
class GitRunner:
    """Runs git with a clean, private configuration."""

    home: Path
    timeout: float = GIT_TIMEOUT

    def env(self, token: str | None) -> dict[str, str]:
        configs = [
            ("safe.directory", "*"),  # the workspace belongs to the agent's user
            ("core.hooksPath", os.devnull),
            ("protocol.allow", "never"),
            ("protocol.file.allow", "always"),
            ("protocol.http.allow", "always"),
            ("protocol.https.allow", "always"),
            ("http.followRedirects", "false"),  # the auth header must not travel elsewhere
            ("credential.helper", ""),
        ]
        if token is not None:
            configs.append(("http.extraHeader", basic_auth_header(token)))
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "GIT_CONFIG_NOSYSTEM": "1",
            # some git versions (2.39 among them) honour safe.directory only from global
            # or system config, so the private HOME carries a global config with just it.
            "GIT_CONFIG_GLOBAL": str(self._global_config()),
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_ASKPASS": "/bin/false",
            "LC_ALL": "C",
            **config_env(configs),
        }
        return env

    def _global_config(self) -> Path:
        path = self.home / "gitconfig"
        if not path.exists():
            path.write_text("[safe]\n\tdirectory = *\n", encoding="utf-8")
        return path

    def run(self, args: Sequence[str], *, cwd: Path, token: str | None = None) -> str:
        try:
            done = subprocess.run(
                ["git", *args],
                cwd=cwd,
                env=self.env(token),
                capture_output=True,
                text=True,
                timeout=self.timeout,
                check=False,
            )
        except subprocess.TimeoutExpired as error:
            raise PushFailed(f"git {args[0]} took longer than {self.timeout:.0f} s") from error
        if done.returncode != 0:
            raise PushFailed(f"git {args[0]} failed: {done.stderr.strip()[-800:]}")
        return done.stdout


@dataclass
class ForkWait:
    """Waiting for a new fork: backoff from half a second up to 15 s between looks, for
    ``budget`` seconds (``agent.fork_wait_seconds``, default 5 minutes: GitHub's
    create-fork description says to contact support past that).

    The budget is spent by the clock or by the sleeps, whichever says more, so an
    injected sleep that does not move the clock still ends the wait."""

    budget: float
    clock: Callable[[], float]
    sleep: Callable[[float], None]
    delay: float = FIRST_WAIT
    slept: float = 0.0
    gave_up: str = ""

    def __post_init__(self) -> None:
        self._start = self.clock()

    def another(self, what: str) -> bool:
        """Sleep before the next look and say True, or say False when the budget is spent."""
        spent = max(self.clock() - self._start, self.slept)
        if spent >= self.budget:
            self.gave_up = (
                f"{what} after {self.budget:.0f} s; try push_branch again in a minute "
                "(agent.fork_wait_seconds sets how long to wait)"
            )
            return False
        step = min(self.delay, self.budget - spent)
        self.sleep(step)
        self.slept += step
        self.delay = min(self.delay * 2, LONGEST_WAIT)
        return True


@dataclass
class Pusher:
    """Everything ``push_branch`` needs; one per server."""

    config: PolicyConfig
    state: RunState
    workspace: Path | None
    read_gateway: Gateway
    write_gateway: Gateway
    read_token: str
    write_token: str
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    private_dir: Path | None = None

    def __post_init__(self) -> None:
        root = self.private_dir or Path(tempfile.mkdtemp(prefix="tusk-push-"))
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.git = GitRunner(home=root)
        self.repo_dir = root / "repo.git"
        if not self.repo_dir.exists():
            self.git.run(["init", "--quiet", "--bare", str(self.repo_dir)], cwd=root)

    # ----------------------------------------------------------------- steps

    def take_from_workspace(self, branch: str) -> str:
        """Copy ``branch`` out of the workspace; returns its commit sha."""
        if self.workspace is None:
            raise PushFailed(
                "this server was started without a workspace, so there is nothing to push"
            )
        policy.validate_branch(branch, self.config)
        ref = f"refs/heads/{branch}"
        try:
            self.git.run(
                [
                    "fetch",
                    "--quiet",
                    "--no-tags",
                    "--no-recurse-submodules",
                    f"file://{self.workspace.resolve()}",
                    f"+{ref}:{ref}",
                ],
                cwd=self.repo_dir,
            )
        except PushFailed as error:
            raise PushFailed(
                f"could not read branch {branch!r} from your workspace; create it "
                f"(git switch -c {branch}) and commit your changes first. ({error})"
            ) from error
        return self.git.run(["rev-parse", ref], cwd=self.repo_dir).strip()

    def fetch_upstream(self, upstream: dict[str, Any]) -> str:
        """Fetch upstream's default branch; returns the local ref it landed in."""
        default = upstream.get("default_branch") or "main"
        base_ref = f"refs/upstream/{default}"
        self.git.run(
            [
                "fetch",
                "--quiet",
                "--no-tags",
                upstream["clone_url"],
                f"+refs/heads/{default}:{base_ref}",
            ],
            cwd=self.repo_dir,
            token=self.read_token,
        )
        return base_ref

    def changed_paths(self, branch: str, base_ref: str) -> list[str]:
        """Every path a commit of ``branch`` touches that upstream's default branch lacks."""
        out = self.git.run(
            [
                "log",
                "--no-renames",
                # merges too: a file a merge commit adds on its own (an "evil merge")
                # is listed by no other commit
                "--diff-merges=dense-combined",
                "--format=",
                "--name-only",
                f"refs/heads/{branch}",
                "--not",
                base_ref,
                "--",
            ],
            cwd=self.repo_dir,
        )
        return sorted({line for line in out.splitlines() if line})

    def new_text(self, branch: str, base_ref: str) -> tuple[str, str]:
        """The messages and the patches of the commits ``branch`` would publish."""
        commits = [f"refs/heads/{branch}", "--not", base_ref, "--"]
        messages = self.git.run(["log", "--format=%B", *commits], cwd=self.repo_dir)
        patch = self.git.run(
            ["log", "-p", "--no-renames", "--diff-merges=dense-combined", "--format=", *commits],
            cwd=self.repo_dir,
        )
        return messages, patch

    def ensure_fork(self, upstream_name: str) -> dict[str, Any]:
        """The bot's fork of ``upstream_name`` (found by its parent, whatever its name),
        created and waited for when missing."""
        fork = find_fork(self.write_gateway, self.config.bot, upstream_name)
        if fork is not None:
            return fork
        # GitHub answers 202 with the fork's name, which is `name-1` when the bot already
        # owns an unrelated `name` (octokit/octokit.js#483).
        created = self.write_gateway.post(f"/repos/{upstream_name}/forks", json={}).body
        full_name = created["full_name"]
        wait = ForkWait(self.config.fork_wait_seconds, clock=self.clock, sleep=self.sleep)
        while True:  # "Forking a Repository happens asynchronously" (repos/create-fork)
            try:
                fork = self.write_gateway.get(f"/repos/{full_name}")
            except NotFound:
                if not wait.another(f"the fork {full_name} was requested but is not ready"):
                    raise PushFailed(wait.gave_up) from None
                continue
            self.wait_until_git_serves(fork["clone_url"], wait)
            return fork

    def wait_until_git_serves(self, url: str, wait: ForkWait) -> None:
        """A new fork's git objects lag behind its REST record: wait until git sees it."""
        while True:
            try:
                self.git.run(
                    ["ls-remote", "--heads", url], cwd=self.repo_dir, token=self.write_token
                )
                return
            except PushFailed:
                if not wait.another(f"the fork at {url} exists but git cannot read it"):
                    raise PushFailed(wait.gave_up) from None

    def remote_has_branch(self, url: str, branch: str) -> bool:
        out = self.git.run(
            ["ls-remote", "--heads", url, f"refs/heads/{branch}"],
            cwd=self.repo_dir,
            token=self.write_token,
        )
        return bool(out.strip())

    # ----------------------------------------------------------------- the tool's work

    def push(self, branch: str) -> WriteOutcome:
        upstream = self.read_gateway.get(f"/repos/{self.config.trigger_repo}")
        base_ref = self.fetch_upstream(upstream)
        policy.check_push_paths(self.changed_paths(branch, base_ref), self.config)
        policy.check_pushed_text(
            *self.new_text(branch, base_ref), secrets=(self.read_token, self.write_token)
        )
        fork = self.ensure_fork(upstream["full_name"])
        exists = self.remote_has_branch(fork["clone_url"], branch)
        force = exists and policy.may_force_push(branch, self.state)
        ref = f"refs/heads/{branch}"
        refspec = f"{'+' if force else ''}{ref}:{ref}"
        try:
            self.git.run(
                ["push", "--quiet", "--no-verify", fork["clone_url"], refspec],
                cwd=self.repo_dir,
                token=self.write_token,
            )
        except PushFailed as error:
            if exists and not force:
                raise PushFailed(
                    f"{fork['full_name']} already has a branch {branch} with commits yours lacks, "
                    "and this run did not create it, so it will not be overwritten. Rebase onto it "
                    f"or push a new branch name. ({error})"
                ) from error
            raise
        url = f"{fork['html_url']}/tree/{branch}"
        return WriteOutcome(
            message=(
                f"pushed {branch} to {fork['full_name']} "
                f"({'updated' if exists else 'new branch'}). "
                f"Open a pull request with head '{self.config.bot}:{branch}' if you have not yet."
            ),
            url=url,
            created="branch",
            created_branch=not exists,
        )
