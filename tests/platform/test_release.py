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


def readme(ref: str, *steps: str) -> str:
    """A README whose set-up installs ``ref`` and runs ``steps``."""
    return (
        "# Tusk\n\n## Putting Tusk on your own bot\n\n1. Install:\n\n   ```bash\n"
        f"   pip install git+https://github.com/tusk-platform/tusk@{ref}\n   ```\n"
        + "".join(f"\n   ```bash\n   {step}\n   ```\n" for step in steps)
        + "\nThe secrets the control repository holds: ...\n\n## Next\n\n`tusk later --x`\n"
    )


def tree(tmp_path: Path, version: str, changelog: str, readme_text: str = "") -> Path:
    (tmp_path / "src" / "tusk").mkdir(parents=True)
    (tmp_path / "src" / "tusk" / "__init__.py").write_text(f'__version__ = "{version}"\n')
    (tmp_path / "CHANGELOG.md").write_text(changelog)
    (tmp_path / "README.md").write_text(readme_text or readme(f"v{version}"))
    return tmp_path


def test_this_tree_is_release_0_2_0_and_its_changelog_says_so() -> None:
    check = release_check()
    assert tusk.__version__ == "0.2.0"
    assert check.problems("v0.2.0") == []
    assert "`tusk init --apply`" in check.changelog_section(ROOT, "0.2.0")
    assert "## Unreleased" in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


def test_readme_installs_a_release_that_holds_every_command_its_set_up_runs() -> None:
    check = release_check()
    assert check.readme_problems(ROOT) == []
    steps = check.setup_steps((ROOT / "README.md").read_text(encoding="utf-8"))
    assert {"tusk init", "--apply", "--control-repo", "tusk doctor"} <= check.setup_words(steps)


OLD_CHANGELOG = (
    "## Unreleased\n- `tusk init --apply` makes the deployment; `--dry-run` stops.\n\n"
    "## [0.1.0] - 2026-12-01\n- `tusk init DIR --bot LOGIN --control-repo R --allowed-user U`"
    " and `tusk doctor`.\n"
)


def test_a_readme_that_installs_a_release_older_than_its_steps_is_not_released(
    tmp_path: Path,
) -> None:
    # README as it was at 0.1.0's tag plus one: installing v0.1.0, running what came after.
    old = readme("v0.1.0", "tusk init --apply --bot b --control-repo o/c --allowed-user o")
    found = release_check().readme_problems(tree(tmp_path, "0.1.0", OLD_CHANGELOG, old))
    assert found == [
        "README's set-up installs v0.1.0 but uses `--apply`, which CHANGELOG.md places in "
        "Unreleased"
    ]
    # The same steps installed from a release that holds them pass; the text past the
    # set-up (`tusk later --x`) is not a step.
    released = OLD_CHANGELOG.replace(
        "## Unreleased\n", "## Unreleased\n\n## [0.2.0] - 2026-12-06\n"
    )
    new = old.replace("@v0.1.0", "@v0.2.0")
    assert release_check().readme_problems(tree(tmp_path / "b", "0.2.0", released, new)) == []


def test_a_step_the_changelog_never_names_and_a_tag_readme_does_not_install_are_named(
    tmp_path: Path,
) -> None:
    text = readme("v0.1.0", "tusk init --bot b --control-repo o/c --allowed-user o --turbo")
    root = tree(tmp_path, "0.1.0", OLD_CHANGELOG, text)
    assert release_check().readme_problems(root) == [
        "README's set-up uses `--turbo`, which CHANGELOG.md never names"
    ]
    assert "README's set-up installs v0.1.0, not the tag v0.2.0" in release_check().problems(
        "v0.2.0", root
    )


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
    assert found and problem in found[0], found


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


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_a_checkout_past_the_release_reports_the_next_development_version(
    tmp_path: Path,
) -> None:
    from tusk.version import Checkout, development_version, read_checkout

    assert development_version("0.2.0", None) == "0.2.0"  # a wheel: no git to ask
    assert development_version("0.2.0", Checkout(0, "abc1234", dirty=False)) == "0.2.0"
    assert development_version("0.2.0", Checkout(3, "abc1234", False)) == "0.2.1.dev3+gabc1234"
    assert development_version("0.2.0", Checkout(0, "abc1234", True)) == (
        "0.2.1.dev0+gabc1234.dirty"
    )
    root = tree(tmp_path, "0.2.0", "## [0.2.0] - 2026-12-06\n- x\n")
    git(root, "init", "-q", "-b", "main")
    git(
        root, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "0.2.0", "--allow-empty"
    )
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "Release 0.2.0")
    assert read_checkout(root, "0.2.0") == Checkout(
        0, git(root, "rev-parse", "--short=7", "HEAD"), False
    )
    (root / "CHANGELOG.md").write_text("## Unreleased\n- y\n\n## [0.2.0] - 2026-12-06\n- x\n")
    git(root, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qam", "After")
    past = read_checkout(root, "0.2.0")
    assert past is not None and (past.commits_past, past.dirty) == (1, False)
    git(root, "tag", "v0.2.0", "HEAD~1")  # the tag, when there is one, decides
    assert read_checkout(root, "0.2.0") == past
    assert read_checkout(tmp_path / "elsewhere", "0.2.0") is None
