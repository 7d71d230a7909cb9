"""Link a mapped local folder where actions/checkout would have put a repository.

Standard library only. Reads the mapping the act runner passes in
TUSK_ACT_REPOSITORIES (``owner/name@ref=/folder`` per line) and the inputs
from the environment set by action.yml.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def mapping(text: str) -> dict[str, Path]:
    found = {}
    for line in text.splitlines():
        key, sep, folder = line.strip().partition("=")
        if sep:
            found[key.lower()] = Path(folder)
    return found


def main() -> int:
    repository = os.environ["CHECKOUT_REPOSITORY"]
    ref = os.environ.get("CHECKOUT_REF", "")
    key = f"{repository}@{ref}".lower()
    known = mapping(os.environ.get("TUSK_ACT_REPOSITORIES", ""))
    source = known.get(key)
    if source is None or not source.is_dir():
        print(
            f"::error title=checkout (local stand-in)::{repository}@{ref} is not available "
            f"offline; the act runner maps only: {', '.join(sorted(known)) or 'nothing'}"
        )
        return 1
    workspace = Path(os.environ["GITHUB_WORKSPACE"])
    target = (workspace / os.environ.get("CHECKOUT_PATH", ".")).resolve()
    if workspace.resolve() not in (target, *target.parents) or target == workspace.resolve():
        print("::error title=checkout (local stand-in)::path must be a folder under the workspace")
        return 1
    if target.is_symlink() or target.exists():
        print(f"::error title=checkout (local stand-in)::{target} already exists")
        return 1
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(source, target_is_directory=True)
    print(f"checked out {repository}@{ref} at {target} (linked to {source})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
