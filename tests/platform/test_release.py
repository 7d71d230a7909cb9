"""A release users can pin: the version, the tag and the CHANGELOG agree, the
release workflow checks and builds a tag, and `tusk init` calls the release it is."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

import tusk
from tusk.cli.init import RELEASE, caller_files
from tusk.sandbox.act_runner import PUBLISHED_AS, act_binary

ROOT = Path(__file__).resolve().parents[2]
RELEASE_WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"


def release_check() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "release_check", ROOT / "scripts/release_check.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tree(tmp_path: Path, version: str, changelog: str) -> Path:
    (tmp_path / "src" / "tusk").mkdir(parents=True)
    (tmp_path / "src" / "tusk" / "__init__.py").write_text(f'__version__ = "{version}"\n')
    (tmp_path / "CHANGELOG.md").write_text(changelog)
    return tmp_path


def test_this_tree_is_release_0_1_0_and_its_changelog_says_so() -> None:
    check = release_check()
    assert tusk.__version__ == "0.1.0"
    assert check.problems("v0.1.0") == []
    assert "The first release" in check.changelog_section(ROOT, "0.1.0")


@pytest.mark.parametrize(
    ("tag", "version", "changelog", "problem"),
    [
        ("v0.2.0", "0.1.0", "## [0.1.0] - 2026-12-01\n- x\n", "is not the version"),
        ("0.1.0", "0.1.0", "## [0.1.0] - 2026-12-01\n- x\n", "is not vX.Y.Z"),
        ("v0.1.0", "0.1.0", "## Unreleased\n- x\n", "has no '## [0.1.0]"),
        ("v0.1.0", "0.1.0", "## [0.1.0] - 2026-12-01\n\n## [0.0.9] - 2026-11-01\n- y\n", "empty"),
    ],
    ids=["tag_not_the_version", "tag_without_v", "no_section", "empty_section"],
)
def test_a_tag_that_disagrees_is_not_a_release(
    tmp_path: Path, tag: str, version: str, changelog: str, problem: str
) -> None:
    found = release_check().problems(tag, tree(tmp_path, version, changelog))
    assert len(found) == 1 and problem in found[0], found


def test_tusk_init_calls_the_release_it_is_by_default() -> None:
    assert str(RELEASE) == f"tusk-platform/tusk@v{tusk.__version__}" == PUBLISHED_AS
    for text in caller_files(RELEASE).values():
        assert f"@v{tusk.__version__}\n" in text


def test_the_release_workflow_starts_on_a_tag_and_publishes_only_on_github() -> None:
    workflow = yaml.safe_load(RELEASE_WORKFLOW.read_text(encoding="utf-8"))
    assert workflow[True] == {"push": {"tags": ["v*"]}}  # YAML 1.1 reads `on` as True
    assert workflow["permissions"] == {"contents": "read"}
    steps = workflow["jobs"]["release"]["steps"]
    assert "release_check.py" in steps[1]["run"]
    assert steps[-1]["if"] == "${{ !env.ACT }}" and "gh release create" in steps[-1]["run"]


def act_release(tmp_path: Path, tag: str) -> subprocess.CompletedProcess[str]:
    event = tmp_path / "push.json"
    event.write_text(json.dumps({"ref": f"refs/tags/{tag}"}))
    home = tmp_path / "home"
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",  # the runner's Python, not this venv's
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "LANG": "C.UTF-8",
    }
    for name in ("PIP_CERT", "SSL_CERT_FILE"):  # this machine's way to its package index
        if os.environ.get(name):
            env[name] = os.environ[name]
    return subprocess.run(
        [
            act_binary(),
            "push",
            "-e",
            str(event),
            "-W",
            str(RELEASE_WORKFLOW),
            "-P",
            "ubuntu-latest=-self-hosted",
            "--no-cache-server",
            "--rm",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.act
@pytest.mark.slow
def test_the_release_workflow_builds_installs_and_runs_the_tag(tmp_path: Path) -> None:
    done = act_release(tmp_path, f"v{tusk.__version__}")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert f"tusk-{tusk.__version__}-py3-none-any.whl" in done.stdout  # built, then installed
    assert "Success - Main Install the wheel alone and run it" in done.stdout
    assert "Main Publish the release" not in done.stdout  # skipped under act


@pytest.mark.act
def test_the_release_workflow_stops_at_a_tag_that_is_not_the_version(tmp_path: Path) -> None:
    done = act_release(tmp_path, "v9.9.9")
    assert done.returncode == 1
    assert "the tag v9.9.9 is not the version in src/tusk/__init__.py" in done.stdout
    assert "Main Build the wheel" not in done.stdout


def test_tusk_init_without_a_ref_writes_callers_of_this_release(tmp_path: Path) -> None:
    args = ["--bot", "my-bot", "--control-repo", "me/tusk-control", "--allowed-user", "me"]
    subprocess.run(
        [sys.executable, "-m", "tusk.cli.main", "init", str(tmp_path), *args], check=True
    )
    agent = (tmp_path / ".github" / "workflows" / "agent.yml").read_text(encoding="utf-8")
    assert f"uses: tusk-platform/tusk/.github/workflows/tusk-agent.yml@v{tusk.__version__}\n" in (
        agent
    )
