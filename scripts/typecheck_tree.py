"""Type-check Tusk with mypy as it is installed, not as it is laid out.

pyproject's package-dir maps folders under the `tusk` package (poller/ is
tusk.poller, actions/run-claude/ is tusk.actions.run_claude); several of those
folders have hyphens, so mypy cannot import them by path, and an editable
install is an import hook mypy cannot follow. This script builds a tree of
symlinks under build/typecheck/ (pyproject's `mypy_path`) mirroring
package-dir, runs mypy on it and on the folders that import Tusk from outside
(bench/, scripts/), and prints mypy's findings with the real paths.
Arguments go to mypy.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TREE = ROOT / "build" / "typecheck"
OUTSIDE = ["bench", "scripts"]


def package_folders(pyproject: dict[str, Any]) -> dict[str, Path]:
    """Each package of the distribution and the folder its modules live in."""
    setuptools = pyproject["tool"]["setuptools"]
    mapped: dict[str, str] = setuptools.get("package-dir", {})
    return {
        name: ROOT / mapped.get(name, name.replace(".", "/")) for name in setuptools["packages"]
    }


def build_tree(folders: dict[str, Path]) -> dict[Path, Path]:
    """Link every module into build/typecheck/<package path>/; return link -> source."""
    shutil.rmtree(TREE, ignore_errors=True)
    links: dict[Path, Path] = {}
    for name, folder in folders.items():
        target = TREE.joinpath(*name.split("."))
        target.mkdir(parents=True, exist_ok=True)
        for source in sorted(folder.glob("*.py")):
            link = target / source.name
            link.symlink_to(source)
            links[link] = source
    return links


def main(argv: list[str]) -> int:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    links = build_tree(package_folders(pyproject))
    shown = {str(link.relative_to(ROOT)): str(src.relative_to(ROOT)) for link, src in links.items()}
    outside = [
        str(p.relative_to(ROOT)) for name in OUTSIDE for p in sorted((ROOT / name).glob("*.py"))
    ]
    command = [sys.executable, "-m", "mypy", *argv, *shown, *outside]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    for line in (result.stdout + result.stderr).splitlines():
        path, sep, rest = line.partition(":")
        print(f"{shown.get(path, path)}{sep}{rest}")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
