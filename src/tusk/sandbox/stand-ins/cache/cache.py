"""The Actions cache, offline: restore and save files by key in a local folder.

Standard library only: it runs before any Tusk install. The folder is
TUSK_ACT_CACHE, set by the act runner for one control repository, so the runs
of one test or demo share a cache as the runs of one repository do on GitHub.
Semantics of actions/cache v4: a key is written once (saving an existing key is
a warning, not a failure); restore tries the exact key, then each restore key
as a prefix, newest entry first, and a miss is no failure.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
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
        found.append((data["created"], data["key"], meta.with_suffix("")))
    return sorted(found, reverse=True)


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
    _, found, folder = match
    for item in folder.rglob("*"):
        if item.is_file():
            target = Path(item.relative_to(folder).as_posix())
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(item, target)
    print(f"Cache restored from key: {found}")
    output("cache-hit", "true" if found == key else "false")
    output("cache-matched-key", found)


def save() -> None:
    key = os.environ["CACHE_KEY"]
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in key)
    folder = store() / safe
    if folder.with_suffix(".json").exists():
        print(f"::warning::Failed to save: Unable to reserve cache with key {key}")
        return
    saved = 0
    for raw in lines("CACHE_PATH"):
        source = Path(raw)
        if source.is_absolute():
            sys.exit(f"::error::the stand-in caches paths under the workspace only, not {raw}")
        files = (
            [source] if source.is_file() else sorted(p for p in source.rglob("*") if p.is_file())
        )
        for file in files:
            target = folder / file.as_posix()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(file, target)
            saved += 1
    if not saved:
        print("::warning::Path Validation Error: no files to save")
        return
    meta = {"key": key, "created": time.time()}
    folder.with_suffix(".json").write_text(json.dumps(meta), encoding="utf-8")
    print(f"Cache saved with key: {key}")


if __name__ == "__main__":
    {"restore": restore, "save": save}[sys.argv[1]]()
