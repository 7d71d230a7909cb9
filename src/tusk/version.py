"""The version this Tusk reports: the release, or how far past it a checkout is.

``tusk.__version__`` is the last release (its tag is ``v`` + it). Installed from
that tag (a wheel, ``pip install git+...@vX.Y.Z``) Tusk is exactly it. Run from a
git checkout, it asks git how many commits lie past the release commit (the tag
when there is one, else the last commit that set ``__version__``) and, past it or
with local changes, reports the next patch's development version in setuptools-scm's
``guess-next-dev`` spelling: ``0.2.1.dev3+g1a2b3c4`` (``.dirty`` for local changes).
A checkout past a release never calls itself the release.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from tusk import __version__

INIT = "src/tusk/__init__.py"


@dataclass(frozen=True)
class Checkout:
    """Where a git checkout stands against the release (what git answered)."""

    commits_past: int
    commit: str  # HEAD's short hash
    dirty: bool


def development_version(release: str, checkout: Checkout | None) -> str:
    """Pure: the release itself, or the next patch's ``.devN`` past it."""
    if checkout is None or (checkout.commits_past == 0 and not checkout.dirty):
        return release
    major, minor, patch = (int(part) for part in release.split(".")[:3])
    local = f"g{checkout.commit}" + (".dirty" if checkout.dirty else "")
    return f"{major}.{minor}.{patch + 1}.dev{checkout.commits_past}+{local}"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True, timeout=10
    ).stdout.strip()


def read_checkout(root: Path, release: str) -> Checkout | None:
    """How ``root`` (Tusk's own checkout) stands against ``release``; None when it is not
    a git checkout of Tusk or git cannot say (then the release is all there is)."""
    if not (root / ".git").exists() or not (root / INIT).is_file():
        return None
    try:
        tag = _git(root, "tag", "--list", f"v{release}")
        base = tag or _git(root, "log", "-1", "--format=%H", "-G", "^__version__ = ", "--", INIT)
        if not base:
            return None
        past = int(_git(root, "rev-list", "--count", f"{base}..HEAD"))
        commit = _git(root, "rev-parse", "--short=7", "HEAD")
        dirty = bool(_git(root, "status", "--porcelain", "--untracked-files=no"))
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    return Checkout(past, commit, dirty)


def running_version() -> str:
    """What ``tusk --version`` prints."""
    root = Path(__file__).resolve().parents[2]
    return development_version(__version__, read_checkout(root, __version__))
