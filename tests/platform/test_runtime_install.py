"""What a run installs, and what it keeps between runs: Claude Code alone from npm,
Tusk's runtime dependencies alone from PyPI, both restored from the Actions cache
on a warm run (the venv even at another path, as act gives each job its own)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / ".github" / "workflows" / "tusk-agent.yml"
CACHE_PY = ROOT / "src" / "tusk" / "sandbox" / "stand-ins" / "cache" / "cache.py"
RESTORE = "actions/cache/restore@"
SAVE = "actions/cache/save@"


def jobs() -> dict[str, Any]:
    return dict(yaml.safe_load(AGENT.read_text(encoding="utf-8"))["jobs"])


def test_the_runtime_npm_install_is_claude_code_alone() -> None:
    package = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))
    assert list(package["dependencies"]) == ["@anthropic-ai/claude-code"]
    assert set(package["devDependencies"]) == {
        "@octokit/openapi",
        "@octokit/graphql-schema",
        "@octokit/fixtures",  # the recordings of real GitHub the tests replay
    }
    lock = json.loads((ROOT / "package-lock.json").read_text(encoding="utf-8"))["packages"]
    runtime = {name for name, entry in lock.items() if name and not entry.get("dev")}
    assert all(name.startswith("node_modules/@anthropic-ai/claude-code") for name in runtime)
    script = (ROOT / "actions" / "install-claude.sh").read_text(encoding="utf-8")
    npm = [line for line in script.splitlines() if line.strip().startswith("npm ")]
    assert npm and all("npm ci" in line and "--omit=dev" in line for line in npm)
    action = yaml.safe_load((ROOT / "actions/run-claude/action.yml").read_text("utf-8"))
    runs = [s.get("run", "") for s in action["runs"]["steps"]]
    assert 'bash "$GITHUB_ACTION_PATH/../install-claude.sh"' in runs
    assert not any("npm " in run for run in runs)  # one script installs Claude Code


def test_claude_code_is_installed_and_kept_before_any_tusk_step_runs() -> None:
    """A cache entry is saved before anything the agent could touch has run: the
    install and its save come before the first of Tusk's actions in the agent job."""
    steps = list(jobs()["agent"]["steps"])
    ids = [s.get("id") for s in steps]
    first_tusk = next(
        i for i, s in enumerate(steps) if s.get("uses", "").startswith("./.tusk/actions/")
    )
    kept = [
        i
        for i, s in enumerate(steps)
        if s.get("uses", "").startswith(SAVE) and s["with"]["path"] == ".tusk/node_modules"
    ]
    assert len(kept) == 1
    save, install = steps[kept[0]], steps[ids.index("claude-install")]
    assert ids.index("claude") < ids.index("claude-install") < kept[0] < first_tusk
    assert install["run"] == "bash .tusk/actions/install-claude.sh"
    miss = "steps.claude.outputs.cache-hit != 'true'"
    assert install["if"] == save["if"] == miss
    assert save["with"] == steps[ids.index("claude")]["with"]


def test_the_python_install_takes_no_extras() -> None:
    script = (ROOT / "actions" / "install.sh").read_text(encoding="utf-8")
    code = [line.strip() for line in script.splitlines() if not line.lstrip().startswith("#")]
    # Tusk by uv, and by pip when uv cannot be had: "$root" alone, no [extras].
    assert '--python "$venv/bin/python" "$root"' in code
    assert '"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$root"' in code
    assert not any("$root[" in line or '"$root"[' in line for line in code)


def test_each_job_restores_the_runtime_before_its_first_step_and_saves_a_miss() -> None:
    for name, job in jobs().items():
        uses = [s.get("uses", "") for s in job["steps"]]
        first_tusk = next(i for i, u in enumerate(uses) if u.startswith("./.tusk/actions/"))
        restores = [s for s in job["steps"][:first_tusk] if s.get("uses", "").startswith(RESTORE)]
        assert any(s["with"]["path"] == ".tusk-venv" for s in restores), name
        saves = [s for s in job["steps"] if s.get("uses", "").startswith(SAVE)]
        venv_save = [s for s in saves if s["with"]["path"] == ".tusk-venv"]
        assert venv_save and "cache-hit != 'true'" in venv_save[0]["if"], name
        if any(u.endswith("/run-claude") for u in uses):
            claude = [s for s in restores if s["with"]["path"] == ".tusk/node_modules"]
            assert claude, name
            saved = [s for s in saves if s["with"]["path"] == ".tusk/node_modules"]
            # Only on a miss, and (no always()) only when the install succeeded.
            assert saved and saved[0]["if"] == "steps.claude.outputs.cache-hit != 'true'"


def test_the_cache_keys_name_tusk_python_and_claude_codes_version(tmp_path: Path) -> None:
    step = next(s for s in jobs()["agent"]["steps"] if s.get("id") == "runtime")
    (tmp_path / ".tusk" / "actions").mkdir(parents=True)
    for name in (
        "package.json",
        "package-lock.json",
        "actions/runtime_keys.py",
        "actions/box-packages.sh",
    ):
        shutil.copyfile(ROOT / name, tmp_path / ".tusk" / name)
    (tmp_path / "out").write_text("")
    env = {
        "PATH": "/usr/bin:/bin",
        "GITHUB_OUTPUT": str(tmp_path / "out"),
        "TUSK_AT": "acme/tusk@v0.1.0",
        "RUNNER": "Linux-X64",
    }
    subprocess.run(["bash", "-c", step["run"]], cwd=tmp_path, env=env, check=True)
    outputs = dict(line.split("=", 1) for line in (tmp_path / "out").read_text().splitlines())
    python = subprocess.run(
        ["python3", "-c", "import platform; print(platform.python_version())"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert outputs["venv-key"] == f"tusk-venv-Linux-X64-py{python}-acme-tusk@v0.1.0"
    claude = json.loads((ROOT / "package.json").read_text())["dependencies"]
    assert outputs["claude-key"].startswith(
        f"tusk-claude-code-Linux-X64-{claude['@anthropic-ai/claude-code']}-"
    )


def test_the_poll_restores_its_venv_before_setting_tusk_up_and_saves_a_miss() -> None:
    poll = yaml.safe_load((ROOT / ".github/workflows/tusk-poll.yml").read_text("utf-8"))
    assert poll["env"]["TUSK_VENV"] == "${{ github.workspace }}/.tusk-venv"
    steps = poll["jobs"]["poll"]["steps"]
    uses = [s.get("uses", "") for s in steps]
    setup = uses.index("./.tusk")
    assert any(
        u.startswith(RESTORE) and s["with"]["path"] == ".tusk-venv"
        for u, s in zip(uses[:setup], steps[:setup], strict=True)
    )
    saved = [
        s
        for s in steps[setup:]
        if s.get("uses", "").startswith(SAVE) and s["with"]["path"] == ".tusk-venv"
    ]
    assert saved and "cache-hit != 'true'" in saved[0]["if"]


def cache(tmp_path: Path, workspace: Path, command: str, **env: str) -> str:
    done = subprocess.run(
        [sys.executable, str(CACHE_PY), command],
        cwd=workspace,
        env={
            "PATH": "/usr/bin:/bin",
            "TUSK_ACT_CACHE": str(tmp_path / "cache"),
            "GITHUB_OUTPUT": str(tmp_path / "output"),
            **env,
        },
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def test_the_cache_stand_in_keeps_links_and_modes_through_a_linked_checkout(
    tmp_path: Path,
) -> None:
    """A venv's bin/python is a link and Claude Code an executable: both come back."""
    published = tmp_path / "published"
    (published / "node_modules" / ".bin").mkdir(parents=True)
    tool = published / "node_modules" / "claude.exe"
    tool.write_text("#!/bin/sh\necho hi\n")
    tool.chmod(0o755)
    (published / "node_modules" / ".bin" / "claude").symlink_to("../claude.exe")
    first, second = tmp_path / "job-1", tmp_path / "job-2"  # act links .tusk in each
    for job in (first, second):
        job.mkdir()
    (first / ".tusk").symlink_to(published, target_is_directory=True)
    key = "tusk-claude-code-Linux-X64-2.1.328-abc"  # dots: not a file suffix
    said = cache(tmp_path, first, "save", CACHE_KEY=key, CACHE_PATH=".tusk/node_modules")
    assert f"Cache saved with key: {key}" in said
    shutil.rmtree(published / "node_modules")  # the next job's checkout has no node_modules
    (second / ".tusk").symlink_to(published, target_is_directory=True)
    said = cache(tmp_path, second, "restore", CACHE_KEY=key)
    assert f"Cache restored from key: {key}" in said
    restored = published / "node_modules"
    assert (restored / ".bin" / "claude").is_symlink()
    assert os.readlink(restored / ".bin" / "claude") == "../claude.exe"
    assert os.access(restored / "claude.exe", os.X_OK)
    assert "cache-hit=true" in (tmp_path / "output").read_text()


def fake_installed_venv(path: Path) -> None:
    """A venv holding this checkout's Tusk and its dependencies, as pip would leave it."""
    subprocess.run(["python3", "-m", "venv", "--without-pip", str(path)], check=True)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site = path / "lib" / version / "site-packages"
    dev_site = sysconfig.get_paths()["purelib"]
    (site / "tusk-here.pth").write_text(f"{ROOT / 'src'}\n{dev_site}\n")


def install(venv: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(ROOT / "actions" / "install.sh")],
        env={
            "PATH": "/usr/bin:/bin",  # no `tusk` of this checkout: a runner's PATH
            "TUSK_VENV": str(venv),
            "GITHUB_PATH": str(tmp_path / "github-path"),
            "HOME": str(tmp_path),
        },
        capture_output=True,
        text=True,
        check=True,
    )


def test_a_venv_restored_at_another_path_runs_tusk_without_installing(tmp_path: Path) -> None:
    made = tmp_path / "job-1" / ".tusk-venv"
    fake_installed_venv(made)
    install(made, tmp_path)
    moved = tmp_path / "job-2" / ".tusk-venv"
    moved.parent.mkdir()
    shutil.move(made, moved)  # the cache restores it into the next job's workspace
    said = install(moved, tmp_path)
    assert f"Tusk is installed in {moved}" in said.stdout
    assert (tmp_path / "github-path").read_text().splitlines()[-1] == str(moved / "bin")
    version = subprocess.run(
        [str(moved / "bin" / "tusk"), "--version"], capture_output=True, text=True, check=True
    )
    assert version.stdout.strip()


# Offline stand-ins for what install.sh fetches: a runner's `python3` whose
# `-m pip install --target DIR uv==...` leaves the stand-in uv in DIR (or fails, as
# without PyPI, when NO_UV is set) and whose `-m venv --clear` venv gets the stand-in
# pip; everything else goes to the real python3. The stand-in uv and pip log their
# arguments and "install" Tusk by a .pth to this checkout, as fake_installed_venv.
PYTHON3 = """#!/bin/bash
if [ "$1 $2 $3" = "-m pip install" ]; then
  echo "python3 $*" >> "$STAND_IN_LOG"
  [ -z "${NO_UV:-}" ] || { echo "ERROR: No matching distribution found for uv" >&2; exit 1; }
  target=""; prev=""
  for arg in "$@"; do [ "$prev" = "--target" ] && target=$arg; prev=$arg; done
  mkdir -p "$target/bin" && cp "$STAND_INS/uv" "$target/bin/uv" && exit 0
fi
if [ "$1 $2 $3" = "-m venv --clear" ]; then
  "$REAL_PYTHON" -m venv --without-pip --clear "$4"
  site="$("$4/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  mkdir "$site/pip" && cp "$STAND_INS/pip.py" "$site/pip/__main__.py" && exit 0
fi
exec "$REAL_PYTHON" "$@"
"""
INSTALLED = """
def installed(python):
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    with open(os.path.join(site, "tusk-here.pth"), "w") as pth:
        pth.write(os.environ["TUSK_SRC"] + "\\n" + os.environ["DEV_SITE"] + "\\n")
"""
UV = f"""import os, subprocess, sys
{INSTALLED}
args = sys.argv[1:]
with open(os.environ["STAND_IN_LOG"], "a") as log:
    log.write("uv " + " ".join(args) + "\\n")
if args == ["--version"]:
    print("uv 0.13.9 (stand-in)")
    sys.exit()
python = args[args.index("--python") + 1]
if args[0] == "venv":
    subprocess.run([python, "-m", "venv", "--without-pip", args[-1]], check=True)
else:
    installed(python)
"""
PIP = f"""import os, subprocess, sys
{INSTALLED}
with open(os.environ["STAND_IN_LOG"], "a") as log:
    log.write("pip " + " ".join(sys.argv[1:]) + "\\n")
installed(sys.executable)
"""


def install_offline(tmp_path: Path, **env: str) -> tuple[subprocess.CompletedProcess[str], str]:
    real = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")
    assert real
    stand_ins = tmp_path / "stand-ins"
    stand_ins.mkdir()
    for name, text in (("python3", PYTHON3), ("uv", f"#!{real}\n{UV}"), ("pip.py", PIP)):
        (stand_ins / name).write_text(text)
        (stand_ins / name).chmod(0o755)
    done = subprocess.run(
        ["bash", str(ROOT / "actions" / "install.sh")],
        env={
            "PATH": f"{stand_ins}:/usr/local/bin:/usr/bin:/bin",
            "REAL_PYTHON": real,
            "STAND_INS": str(stand_ins),
            "STAND_IN_LOG": str(tmp_path / "log"),
            "TUSK_SRC": str(ROOT / "src"),
            "DEV_SITE": sysconfig.get_paths()["purelib"],
            "RUNNER_TEMP": str(tmp_path / "runner-temp"),
            "TUSK_VENV": str(tmp_path / ".tusk-venv"),
            "GITHUB_PATH": str(tmp_path / "github-path"),
            "HOME": str(tmp_path),
            **env,
        },
        capture_output=True,
        text=True,
        check=True,
    )
    tusk = tmp_path / ".tusk-venv" / "bin" / "tusk"
    version = subprocess.run([str(tusk), "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip()
    return done, (tmp_path / "log").read_text()


def test_tusk_is_installed_with_a_pinned_uv_of_its_own(tmp_path: Path) -> None:
    done, log = install_offline(tmp_path)
    fetch, make, put = log.splitlines()[:3]
    uv_release = f"--target {tmp_path / 'runner-temp' / 'tusk-uv'} uv=="
    assert fetch.startswith("python3 -m pip install") and uv_release in fetch
    python3 = tmp_path / "stand-ins" / "python3"  # the runner's python3, never uv's own
    assert make.startswith("uv venv --no-config") and f"--python {python3} " in make
    venv = tmp_path / ".tusk-venv"
    assert make.endswith(f" {venv}")
    assert put.startswith("uv pip install --no-config")
    assert put.endswith(f"--python {venv}/bin/python {ROOT}")  # "$root" alone: no extras
    assert not any(line.startswith("pip ") for line in log.splitlines())  # not pip
    assert f"Installed Tusk in {venv} with uv 0.13.9" in done.stdout


def test_without_uv_pip_installs_tusk_and_says_so(tmp_path: Path) -> None:
    done, log = install_offline(tmp_path, NO_UV="1")
    assert "uv venv" not in log and "uv pip" not in log
    assert log.splitlines()[-1] == f"pip install --quiet --disable-pip-version-check {ROOT}"
    assert "uv could not be had" in done.stdout and "No matching distribution" in done.stderr
    assert f"Installed Tusk in {tmp_path / '.tusk-venv'} with pip" in done.stdout
