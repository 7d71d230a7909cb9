"""Zip the inputs' paths and store them in the local GitHub (sandbox-only route).

Standard library only: it runs before, and independently of, any Tusk install.
Inputs arrive as environment variables set by action.yml.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path


def collect(paths: list[str], include_hidden: bool) -> dict[str, Path]:
    """Archive name → file, as upload-artifact lays them out."""
    found: dict[str, Path] = {}
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_file():
            found[path.name] = path
        elif path.is_dir():
            for file in sorted(p for p in path.rglob("*") if p.is_file()):
                relative = file.relative_to(path)
                if not include_hidden and any(part.startswith(".") for part in relative.parts):
                    continue
                found[relative.as_posix()] = file
    return found


def zip_bytes(files: dict[str, Path]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, file in sorted(files.items()):
            archive.write(file, name)
    return buffer.getvalue()


def set_outputs(values: dict[str, str]) -> None:
    target = os.environ.get("GITHUB_OUTPUT")
    if target:
        with open(target, "a", encoding="utf-8") as handle:
            handle.writelines(f"{key}={value}\n" for key, value in values.items())


def main() -> int:
    env = os.environ
    name = env["ARTIFACT_NAME"]
    paths = [line.strip() for line in env["ARTIFACT_PATH"].splitlines() if line.strip()]
    files = collect(paths, env.get("INCLUDE_HIDDEN") == "true")
    if not files:
        message = f"No files were found with the provided path: {env['ARTIFACT_PATH']}"
        if env.get("IF_NO_FILES_FOUND") == "error":
            print(f"::error::{message}")
            return 1
        if env.get("IF_NO_FILES_FOUND") != "ignore":
            print(f"::warning::{message}. No artifacts will be uploaded.")
        return 0
    data = zip_bytes(files)
    query = urllib.parse.urlencode(
        {"name": name, "run_id": env.get("RUN_ID", "1"), "overwrite": env.get("OVERWRITE", "false")}
    )
    url = f"{env['API_URL'].rstrip('/')}/_sandbox/artifacts/{env['REPOSITORY']}?{query}"
    headers = {"Content-Type": "application/zip"}
    if env.get("UPLOAD_TOKEN"):
        headers["Authorization"] = f"Bearer {env['UPLOAD_TOKEN']}"
    request = urllib.request.Request(url, data=data, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            stored = json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        said = error.read().decode(errors="replace")
        print(f"::error::upload of {name} failed: {error.code} {said}")
        return 1
    artifact_id = str(stored.get("id", ""))
    print(f"Artifact {name} stored with id {artifact_id} ({len(data)} bytes)")
    set_outputs(
        {
            "artifact-id": artifact_id,
            "artifact-url": str(stored.get("url", "")),
            "artifact-digest": hashlib.sha256(data).hexdigest(),
        }
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
