"""``push_branch``: the agent's commits onto the bot's fork, without git ever opening the
agent's workspace as the server.

A workspace is a folder the agent controls: a loose ref that is a symlink or
an ``objects/info/alternates`` file makes git, run there as the server, read
repositories the agent itself cannot read and push their content. So the
agent's side hands over a bundle of the branch, made by a process running as
the agent's own user (``agent_git``). The server checks the bundle's
header (``bundle``: one ref, the branch; no capability but the hash; only
prerequisites it offered), imports its pack into a private bare repository
with ``git index-pack --strict`` (every object well-formed, none missing),
checks what the push would publish (``push_checks``: paths from ``-z``
output, secrets in every commit, name and file), and pushes from there.

No hook or configuration of the agent's runs with the server's rights: git
reads only the private repository and a private, empty configuration. The
token reaches git only through the environment of the one git process that
needs it (``GIT_CONFIG_*`` → ``http.extraHeader``): never an argument (argv is
world-readable), never a file. The push refspec always names a source, so it
can never delete a branch; it carries ``+`` (force) only for a branch this
run created.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tusk.git.agent import BundleError, BundleSource
from tusk.git.env import basic_auth_header, config_env
from tusk.github.backoff import Backoff
from tusk.github.forks import find_fork
from tusk.github.gateway import Gateway, NotFound
from tusk.mcp.gate import policy
from tusk.mcp.gate.policy import PolicyConfig, Refused, RunState
from tusk.mcp.push import bundle
from tusk.mcp.push import checks as push_checks
from tusk.mcp.writes.outcomes import OperationFailed, WriteOutcome

GIT_TIMEOUT = 300.0
FIRST_WAIT = 0.5
LONGEST_WAIT = 15.0
# GitHub refuses files over 100 MiB; nothing bigger is read into memory for the scan.
MAX_FILE_BYTES = 100 * 1024 * 1024


class PushFailed(OperationFailed):
    """Git or the fork did not cooperate; the message says what to do."""

    code = "PUSH_FAILED"


@dataclass(frozen=True)
class GitRunner:
    """Runs git in the server's private repository with a clean, private configuration."""

    home: Path
    timeout: float = GIT_TIMEOUT

    def env(self, token: str | None) -> dict[str, str]:
        configs = [
            ("core.hooksPath", os.devnull),
            ("protocol.allow", "never"),
            ("protocol.http.allow", "always"),
            ("protocol.https.allow", "always"),
            ("http.followRedirects", "false"),  # the auth header must not travel elsewhere
            ("credential.helper", ""),
        ]
        if token is not None:
            configs.append(("http.extraHeader", basic_auth_header(token)))
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_ASKPASS": "/bin/false",
            "LC_ALL": "C",
            **config_env(configs),
        }

    def run_bytes(
        self,
        args: Sequence[str],
        *,
        cwd: Path,
        token: str | None = None,
        stdin: bytes | None = None,
    ) -> bytes:
        try:
            done = subprocess.run(
                ["git", *args],
                cwd=cwd,
                env=self.env(token),
                input=stdin,
                capture_output=True,
                timeout=self.timeout,
                check=False,
            )
        except subprocess.TimeoutExpired as error:
            raise PushFailed(f"git {args[0]} took longer than {self.timeout:.0f} s") from error
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", "replace").strip()[-800:]
            raise PushFailed(f"git {args[0]} failed: {said}")
        return done.stdout

    def run(self, args: Sequence[str], *, cwd: Path, token: str | None = None) -> str:
        return self.run_bytes(args, cwd=cwd, token=token).decode("utf-8", "replace")


@dataclass(frozen=True)
class Taken:
    """A branch imported from the agent's bundle, ready to be checked and pushed."""

    branch: str
    sha: str
    base_ref: str  # upstream's default branch, fetched: what the fork already has
    upstream: dict[str, Any]


class ForkWait:
    """Waiting for a new fork: backoff (``tusk.github.backoff``) from half a second up to
    15 s between looks, for ``budget`` seconds (``agent.fork_wait_seconds``, default 5
    minutes: GitHub's create-fork description says to contact support past that)."""

    def __init__(
        self, budget: float, *, clock: Callable[[], float], sleep: Callable[[float], None]
    ) -> None:
        self.backoff = Backoff(
            budget, sleep=sleep, clock=clock, first=FIRST_WAIT, longest=LONGEST_WAIT
        )
        self.gave_up = ""

    def another(self, what: str) -> bool:
        """Sleep before the next look and say True, or say False when the budget is spent."""
        if self.backoff.wait():
            return True
        self.gave_up = (
            f"{what} after {self.backoff.budget:.0f} s; try push_branch again in a minute "
            "(agent.fork_wait_seconds sets how long to wait)"
        )
        return False


@dataclass
class Pusher:
    """Everything ``push_branch`` needs; one per server."""

    config: PolicyConfig
    state: RunState
    source: BundleSource | None
    read_gateway: Gateway
    write_gateway: Gateway
    read_token: str
    write_token: str
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    private_dir: Path | None = None
    # The bundles an approved set kept, by branch: an apply job pushes these, not a workspace.
    kept: dict[str, bytes] = field(default_factory=dict)

    def __post_init__(self) -> None:
        root = self.private_dir or Path(tempfile.mkdtemp(prefix="tusk-push-"))
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.git = GitRunner(home=root)
        self.repo_dir = root / "repo.git"
        if not self.repo_dir.exists():
            self.git.run(["init", "--quiet", "--bare", str(self.repo_dir)], cwd=root)

    # ----------------------------------------------------------------- taking the branch

    def take(self, branch: str) -> Taken:
        """Import ``branch`` from the agent's bundle; refuses what is not plain git."""
        if self.source is None:
            raise PushFailed(
                "this server was started without the agent's workspace, so there is nothing to push"
            )
        policy.validate_branch(branch, self.config)
        upstream = self.read_gateway.get(f"/repos/{self.config.trigger_repo}")
        base_ref = self.fetch_upstream(upstream)
        base_sha = self.git.run(["rev-parse", base_ref], cwd=self.repo_dir).strip()
        try:
            data = self.source.bundle(branch, [base_sha])
        except BundleError as error:
            raise PushFailed(
                f"could not take branch {branch!r} from your workspace: {error.title}. Create "
                f"it (git switch -c {branch}) and commit your changes on it first."
            ) from error
        header = bundle.parse_bundle(data)
        tip = bundle.check_bundle(header, branch=branch, offered=[base_sha])
        self.import_pack(data[header.pack_offset :], tip=tip, base_ref=base_ref)
        self.git.run(["update-ref", f"refs/heads/{branch}", tip], cwd=self.repo_dir)
        return Taken(branch=branch, sha=tip, base_ref=base_ref, upstream=upstream)

    def import_pack(self, pack: bytes, *, tip: str, base_ref: str) -> None:
        """Index the pack strictly, then prove the branch's whole history is here."""
        try:
            self.git.run_bytes(
                ["index-pack", "--stdin", "--fix-thin", "--strict"], cwd=self.repo_dir, stdin=pack
            )
            kind = self.git.run(["cat-file", "-t", tip], cwd=self.repo_dir).strip()
            if kind != "commit":
                raise bundle.invalid(f"the branch points at a {kind}, not a commit")
            self.git.run(
                ["rev-list", "--objects", "--quiet", tip, "--not", base_ref], cwd=self.repo_dir
            )
        except PushFailed as error:
            raise bundle.invalid(f"git refused its objects ({error})") from None

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

    # ----------------------------------------------------------------- what it publishes

    def new_commits(self, taken: Taken) -> list[str]:
        out = self.git.run(["rev-list", taken.sha, "--not", taken.base_ref], cwd=self.repo_dir)
        return out.split()

    def diffstat(self, taken: Taken) -> dict[str, int]:
        """Files changed, lines added and deleted between the fork's base and the pushed
        commit, as git counts them (a binary file counts as a file, no lines)."""
        out = self.git.run(["diff", "--numstat", taken.base_ref, taken.sha], cwd=self.repo_dir)
        stats = [line.split("\t", 2) for line in out.splitlines() if line.count("\t") >= 2]
        return {
            "files": len(stats),
            "additions": sum(int(a) for a, _, _ in stats if a.isdigit()),
            "deletions": sum(int(d) for _, d, _ in stats if d.isdigit()),
        }

    def changes(self, commits: Sequence[str]) -> list[push_checks.Change]:
        """Every path each new commit changes (a merge: what differs from all its parents,
        so a file an "evil merge" adds on its own is listed too), NUL-separated."""
        if not commits:
            return []
        out = self.git.run_bytes(
            [
                "diff-tree",
                "--stdin",
                "-z",
                "-r",
                "-t",
                "--no-renames",
                "--root",
                "-c",
                "--raw",
                "--no-commit-id",
            ],
            cwd=self.repo_dir,
            stdin="".join(f"{c}\n" for c in commits).encode(),
        )
        return push_checks.parse_raw_changes(out)

    def objects(self, oids: Iterable[str]) -> dict[str, tuple[str, bytes]]:
        """Type and content of each object, read in one ``cat-file --batch``."""
        wanted = sorted(set(oids))
        if not wanted:
            return {}
        listing = self.git.run_bytes(
            ["cat-file", "--batch-check"],
            cwd=self.repo_dir,
            stdin="".join(f"{o}\n" for o in wanted).encode(),
        )
        readable = []
        for line in listing.decode("ascii", "replace").splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] != "missing":
                if int(parts[2]) > MAX_FILE_BYTES:
                    raise Refused(
                        "LIMIT_EXCEEDED",
                        f"object {parts[0][:12]} is {parts[2]} bytes; GitHub refuses files over "
                        "100 MiB. Leave it out of the branch.",
                    )
                readable.append(parts[0])
        raw = self.git.run_bytes(
            ["cat-file", "--batch"],
            cwd=self.repo_dir,
            stdin="".join(f"{o}\n" for o in readable).encode(),
        )
        found: dict[str, tuple[str, bytes]] = {}
        at = 0
        while at < len(raw):
            line_end = raw.index(b"\n", at)
            oid, kind, size = raw[at:line_end].decode("ascii").split()
            start = line_end + 1
            found[oid] = (kind, raw[start : start + int(size)])
            at = start + int(size) + 1
        return found

    def check_publishable(self, taken: Taken) -> None:
        """Refuse a push touching workflows (unless allowed) or publishing a secret."""
        commits = self.new_commits(taken)
        changes = self.changes(commits)
        push_checks.check_push_paths([c.path for c in changes], self.config)
        listed = self.git.run(
            ["rev-list", "--objects", "--no-object-names", taken.sha, "--not", taken.base_ref],
            cwd=self.repo_dir,
        ).split()
        file_ids = {
            oid
            for change in changes
            if change.new_mode not in (push_checks.GITLINK_MODE, push_checks.TREE_MODE)
            for oid in (change.new, *change.old)
            if oid != push_checks.ZERO_OID
        }
        objects = self.objects([*listed, *file_ids])
        push_checks.check_pushed_secrets(
            branch=taken.branch,
            commits={o: data for o, (kind, data) in objects.items() if kind == "commit"},
            tree_names=(
                name
                for kind, data in objects.values()
                if kind == "tree"
                for name in push_checks.tree_entry_names(data)
            ),
            changes=changes,
            blobs={o: data for o, (kind, data) in objects.items() if kind == "blob"},
            literals=(self.read_token, self.write_token),
        )

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
            return dict(fork)

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

    def push(self, taken: Taken) -> WriteOutcome:
        self.check_publishable(taken)
        branch, upstream = taken.branch, taken.upstream
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
            head=taken.sha,  # undo deletes the branch only while it still points here
        )
