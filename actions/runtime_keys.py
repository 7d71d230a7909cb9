"""The Actions cache keys of a job's runtime, written to $GITHUB_OUTPUT.

Standard library only: it runs before Tusk is installed, from the Tusk checkout
at .tusk (the reusable workflows' `runtime` step). `venv-key` names Tusk's
virtualenv by Tusk's commit (the ref the caller pinned, where the checkout has
no git metadata) and Python's version; `claude-key` names Claude Code by its
version and the lock file.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess


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
    runner, python = os.environ["RUNNER"], platform.python_version()
    with open(os.environ["GITHUB_OUTPUT"], "a", encoding="utf-8") as out:
        out.write(f"venv-key=tusk-venv-{runner}-py{python}-{tusk}\n")
        out.write(f"claude-key=tusk-claude-code-{runner}-{claude}-{lock}\n")


if __name__ == "__main__":
    main()
