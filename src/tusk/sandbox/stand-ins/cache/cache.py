"""The Actions cache, offline: restore and save files by key in a local folder.

Standard library only: it runs before any Tusk install. The folder is
TUSK_ACT_CACHE, set by the act runner for one control repository, so the runs
of one test or demo share a cache as the runs of one repository do on GitHub.
Semantics of actions/cache v4: a key is written once (saving an existing key is
a warning, not a failure); restore tries the exact key, then each restore key
as a prefix, newest entry first, and a miss is no failure. Like the real action,
an entry is a tar archive (github.com/actions/toolkit, packages/cache: tar with
zstd), so symbolic links and file modes come back as they were saved: a
virtualenv's `bin/python` link and Claude Code's executable survive.
"""

from __future__ import annotations

import json
import os
import sys
import tarfile
import time
from pathlib import Path


def store() -> Path:
    folder = os.environ.get("TUSK_ACT_CACHE")
    if not folder:
        sys.exit("::error::TUSK_ACT_CACHE is not set; the act runner sets it")
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    return path


def lines(name: str) -> list[str]:
    return [line.strip() for line in os.environ.get(name, "").splitlines() if line.strip()]


def entries() -> list[tuple[float, str, Path]]:
    found = []
    for meta in store().glob("*.json"):
        data = json.loads(meta.read_text(encoding="utf-8"))
        found.append((data["created"], data["key"], meta))
    return sorted(found, reverse=True)


def archive_of(meta: Path) -> Path:
    """The tar archive beside an entry's ``<key>.json`` (keys may hold dots)."""
    return meta.parent / (meta.name.removesuffix(".json") + ".tar")


def output(name: str, value: str) -> None:
    with open(os.environ["GITHUB_OUTPUT"], "a", encoding="utf-8") as out:
        out.write(f"{name}={value}\n")


def restore() -> None:
    key = os.environ["CACHE_KEY"]
    known = entries()
    match = next((e for e in known if e[1] == key), None)
    for prefix in lines("CACHE_RESTORE_KEYS"):
        match = match or next((e for e in known if e[1].startswith(prefix)), None)
    output("cache-primary-key", key)
    if match is None:
        print(f"Cache not found for input keys: {key}")
        output("cache-hit", "false")
        return
    _, found, meta = match
    # The archive was written by save() below from this workspace; a checkout the act
    # runner links in (.tusk) is a link out of the workspace, so no path filter applies.
    trusted = {"filter": "fully_trusted"} if hasattr(tarfile, "fully_trusted_filter") else {}
    with tarfile.open(archive_of(meta)) as archive:
        archive.extractall(".", **trusted)
    print(f"Cache restored from key: {found}")
    output("cache-hit", "true" if found == key else "false")
    output("cache-matched-key", found)


def save() -> None:
    key = os.environ["CACHE_KEY"]
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in key)
    meta = store() / f"{safe}.json"
    if meta.exists():
        print(f"::warning::Failed to save: Unable to reserve cache with key {key}")
        return
    sources = []
    for raw in lines("CACHE_PATH"):
        source = Path(raw)
        if source.is_absolute():
            sys.exit(f"::error::the stand-in caches paths under the workspace only, not {raw}")
        if source.exists() or source.is_symlink():
            sources.append(source)
    if not sources:
        print("::warning::Path Validation Error: no files to save")
        return
    with tarfile.open(archive_of(meta), "w") as archive:
        for source in sources:
            archive.add(source.as_posix())
    meta.write_text(json.dumps({"key": key, "created": time.time()}), encoding="utf-8")
    print(f"Cache saved with key: {key}")


if __name__ == "__main__":
    {"restore": restore, "save": save}[sys.argv[1]]()
