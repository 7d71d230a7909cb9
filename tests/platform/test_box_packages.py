"""The box's system packages (bubblewrap, socat, tinyproxy): installed only when
missing, downloaded once into the folder the agent workflow keeps in the Actions
cache, and installed from there with dpkg on a warm run: no apt-get at all."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "actions" / "box-packages.sh"
AGENT = ROOT / ".github" / "workflows" / "tusk-agent.yml"
TOOLS = {"bubblewrap": "bwrap", "socat": "socat", "tinyproxy-bin": "tinyproxy"}

# Offline stand-ins, logging each call: `id` says a runner's user (not root), `sudo`
# runs what it is given, apt-get "downloads" a .deb per package (tinyproxy brings
# tinyproxy-bin, as on Debian and Ubuntu) into Dir::Cache::archives and installs it,
# dpkg installs the tools of the .deb files it is given (or fails with DPKG_FAILS).
STAND_INS = {
    "id": "echo 1001\n",
    "sudo": 'echo "sudo $*" >> "$LOG"\n[ "$1" = --non-interactive ] && shift\nexec "$@"\n',
    "apt-get": """echo "apt-get $*" >> "$LOG"
[ "$1" = update ] && exit 0
archives=/var/cache/apt/archives; packages=""
while [ $# -gt 0 ]; do
  case "$1" in
    -o) case "$2" in Dir::Cache::archives=*) archives="${2#*=}";; esac; shift;;
    -*|install) ;;
    *) packages="$packages $1"; [ "$1" = tinyproxy ] && packages="$packages tinyproxy-bin";;
  esac
  shift
done
mkdir -p "$archives/partial" && touch "$archives/lock"
for p in $packages; do touch "$archives/${p}_1.0_amd64.deb"; done
install_tools $packages
""",
    "dpkg": """echo "dpkg $*" >> "$LOG"
[ -z "${DPKG_FAILS:-}" ] || exit 1
shift
install_tools $(for deb in "$@"; do basename "$deb" | cut -d_ -f1; done)
""",
}
INSTALL_TOOLS = """install_tools() {
  for p in "$@"; do
    case "$p" in
      bubblewrap) t=bwrap;; socat) t=socat;; tinyproxy-bin) t=tinyproxy;; *) continue;;
    esac
    printf '#!/bin/sh\\n' > "$TOOLS/$t" && chmod 755 "$TOOLS/$t"
  done
}
"""


def run(tmp_path: Path, debs: Path | None, **env: str) -> tuple[str, str, str]:
    stand_ins, tools = tmp_path / "stand-ins", tmp_path / "tools"
    for folder in (stand_ins, tools):
        folder.mkdir(exist_ok=True)
    for name, body in STAND_INS.items():
        (stand_ins / name).write_text(f"#!/bin/bash\n{INSTALL_TOOLS}{body}")
        (stand_ins / name).chmod(0o755)
    (tmp_path / "log").write_text("")
    (tmp_path / "output").write_text("")
    done = subprocess.run(
        ["bash", str(SCRIPT)],
        env={
            "PATH": f"{stand_ins}:/usr/bin:/bin",
            "TUSK_BOX_TOOLS_PATH": str(tools),
            "TOOLS": str(tools),
            "LOG": str(tmp_path / "log"),
            "GITHUB_OUTPUT": str(tmp_path / "output"),
            **({"TUSK_BOX_DEBS": str(debs)} if debs else {}),
            **env,
        },
        capture_output=True,
        text=True,
        check=True,
    )
    log = (tmp_path / "log").read_text()
    return done.stdout, log, (tmp_path / "output").read_text()


def test_nothing_is_installed_when_the_tools_are_there(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    for tool in TOOLS.values():
        (tmp_path / "tools" / tool).write_text("#!/bin/sh\n")
        (tmp_path / "tools" / tool).chmod(0o755)
    said, log, output = run(tmp_path, tmp_path / "debs")
    assert "nothing to install" in said
    assert log == "" and output == ""


def test_a_miss_downloads_into_the_kept_folder_and_a_hit_installs_from_it(
    tmp_path: Path,
) -> None:
    cold, warm = tmp_path / "cold", tmp_path / "warm"
    cold.mkdir()
    warm.mkdir()
    debs = cold / ".tusk-box-debs"
    said, log, output = run(cold, debs)
    calls = log.splitlines()
    assert calls[0] == "sudo --non-interactive true"
    assert "sudo --non-interactive apt-get update -qq" in calls
    install = next(c for c in calls if c.startswith("apt-get install"))
    assert f"-o Dir::Cache::archives={debs}" in install
    assert install.endswith(" bubblewrap socat tinyproxy")
    assert "Installed bubblewrap socat tinyproxy with apt-get" in said
    assert output == "downloaded=true\n"  # the workflow saves the folder
    kept = sorted(path.name for path in debs.iterdir())
    # No apt lock or partial folder: all of it is the runner user's to save.
    assert kept == [f"{name}_1.0_amd64.deb" for name in ("bubblewrap", "socat")] + [
        f"{name}_1.0_amd64.deb" for name in ("tinyproxy-bin", "tinyproxy")
    ]

    restored = warm / ".tusk-box-debs"  # the next runner, its Actions cache restored
    shutil.copytree(debs, restored)
    said, log, output = run(warm, restored)
    assert "apt-get" not in log  # no update, no download
    dpkg = [c for c in log.splitlines() if c.startswith("dpkg")]
    assert dpkg == ["dpkg --install " + " ".join(str(restored / name) for name in kept)]
    assert "from the Actions cache" in said and output == ""
    assert sorted(p.name for p in (warm / "tools").iterdir()) == sorted(TOOLS.values())


def test_cached_packages_that_do_not_install_fall_back_to_apt_get(tmp_path: Path) -> None:
    debs = tmp_path / "debs"
    debs.mkdir()
    (debs / "bubblewrap_1.0_amd64.deb").write_text("")
    said, log, _ = run(tmp_path, debs, DPKG_FAILS="1")
    assert "did not give the box its tools" in said
    install = next(c for c in log.splitlines() if c.startswith("apt-get install"))
    assert "--fix-broken" in install


def test_without_a_folder_apt_get_installs_as_usual(tmp_path: Path) -> None:
    _, log, output = run(tmp_path, None)
    install = next(c for c in log.splitlines() if c.startswith("apt-get install"))
    assert "Dir::Cache::archives" not in install and output == ""


def agent_steps() -> list[dict[str, Any]]:
    workflow = yaml.safe_load(AGENT.read_text(encoding="utf-8"))
    return list(workflow["jobs"]["agent"]["steps"])


def test_the_agent_job_keeps_the_packages_it_downloaded_before_any_tusk_step() -> None:
    steps = agent_steps()
    uses = [s.get("uses", "") for s in steps]
    first_tusk = next(i for i, u in enumerate(uses) if u.startswith("./.tusk/actions/"))
    ids = [s.get("id") for s in steps]
    restore, box = steps[ids.index("box-debs")], steps[ids.index("box")]
    save = next(
        s
        for s in steps
        if s.get("uses", "").startswith("actions/cache/save@")
        and s["with"]["path"] == ".tusk-box-debs"
    )
    assert ids.index("box-debs") < ids.index("box") < steps.index(save) < first_tusk
    assert (
        restore["with"]
        == save["with"]
        == {
            "path": ".tusk-box-debs",
            "key": "${{ steps.runtime.outputs.box-key }}",
        }
    )
    assert box["env"]["TUSK_BOX_DEBS"] == "${{ github.workspace }}/.tusk-box-debs"
    assert box["run"] == "bash .tusk/actions/box-packages.sh"
    assert save["if"] == "steps.box.outputs.downloaded == 'true'"
    action = yaml.safe_load((ROOT / "actions/run-claude/action.yml").read_text("utf-8"))
    runs = [s.get("run", "") for s in action["runs"]["steps"]]
    assert 'bash "$GITHUB_ACTION_PATH/../box-packages.sh"' in runs
    assert not any("apt-get" in run for run in runs)  # one script installs the box


def test_the_box_key_names_the_image_the_week_and_the_script(tmp_path: Path) -> None:
    step = next(s for s in agent_steps() if s.get("id") == "runtime")
    (tmp_path / ".tusk" / "actions").mkdir(parents=True)
    for name in ("package.json", "package-lock.json", "actions/runtime_keys.py"):
        shutil.copyfile(ROOT / name, tmp_path / ".tusk" / name)
    shutil.copyfile(SCRIPT, tmp_path / ".tusk" / "actions" / "box-packages.sh")
    (tmp_path / "out").write_text("")
    env = {
        "PATH": "/usr/bin:/bin",
        "GITHUB_OUTPUT": str(tmp_path / "out"),
        "TUSK_AT": "acme/tusk@v0.1.0",
        "RUNNER": "Linux-X64",
        "ImageOS": "ubuntu24",
        "ImageVersion": "20261124.1.0",
    }
    subprocess.run(["bash", "-c", step["run"]], cwd=tmp_path, env=env, check=True)
    outputs = dict(line.split("=", 1) for line in (tmp_path / "out").read_text().splitlines())
    script = hashlib.sha256(SCRIPT.read_bytes()).hexdigest()[:16]
    assert re.fullmatch(
        rf"tusk-box-debs-Linux-X64-ubuntu24-20261124\.1\.0-\d{{4}}-W\d\d-{script}",
        outputs["box-key"],
    )
