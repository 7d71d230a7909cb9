"""The Actions cache keys of a job's runtime, written to $GITHUB_OUTPUT.

Standard library only: it runs before Tusk is installed, from the Tusk checkout
at .tusk (the reusable workflows' `runtime` step). `venv-key` names Tusk's
virtualenv by Tusk's commit (the ref the caller pinned, where the checkout has
no git metadata) and Python's version; `claude-key` names Claude Code by its
version and the lock file; `box-key` names the box's system packages (their .deb
files) by the runner image (GitHub's ImageOS and ImageVersion; elsewhere the
system's os-release), the week, so that a week-old download is refreshed with
the security updates since, and the script that installs them.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import time


def main() -> None:
    head = ""
    if os.path.exists(".tusk/.git"):
        head = subprocess.run(
            ["git", "-C", ".tusk", "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
    tusk = head or os.environ["TUSK_AT"].replace("/", "-")
    with open(".tusk/package.json", encoding="utf-8") as f:
        claude = json.load(f)["dependencies"]["@anthropic-ai/claude-code"]
    with open(".tusk/package-lock.json", "rb") as f:
        lock = hashlib.sha256(f.read()).hexdigest()[:16]
    with open(".tusk/actions/box-packages.sh", "rb") as f:
        box = hashlib.sha256(f.read()).hexdigest()[:16]
    runner, python = os.environ["RUNNER"], platform.python_version()
    week = time.strftime("%G-W%V", time.gmtime())
    with open(os.environ["GITHUB_OUTPUT"], "a", encoding="utf-8") as out:
        out.write(f"venv-key=tusk-venv-{runner}-py{python}-{tusk}\n")
        out.write(f"claude-key=tusk-claude-code-{runner}-{claude}-{lock}\n")
        out.write(f"box-key=tusk-box-debs-{runner}-{image()}-{week}-{box}\n")


def image() -> str:
    """The runner image: GitHub's hosted runners name it; elsewhere the system's release."""
    # GitHub spells these two in mixed case (docs: the runner images' environment).
    name, version = os.environ.get("ImageOS"), os.environ.get("ImageVersion")  # noqa: SIM112
    if name and version:
        return f"{name}-{version}"
    try:
        release = platform.freedesktop_os_release()
    except OSError:
        return "unknown"
    return f"{release.get('ID', 'linux')}-{release.get('VERSION_ID', 'unknown')}"


if __name__ == "__main__":
    main()
