"""How push_branch hands git its token: environment only, never argv or a file."""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path
from typing import Any

from tusk.mcp.push.git_push import GitRunner

TOKEN = "agent-token-4f1c9e2b7d6a"


def test_token_reaches_git_only_through_its_environment(tmp_path: Path, monkeypatch: Any) -> None:
    seen: list[dict[str, Any]] = []

    def fake_run(args: list[str], **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        seen.append({"args": args, "env": kwargs["env"]})
        return subprocess.CompletedProcess(args, 0, b"", b"")

    monkeypatch.setattr(subprocess, "run", fake_run)
    runner = GitRunner(home=tmp_path)
    runner.run(
        ["push", "http://127.0.0.1:1/o/r.git", "refs/heads/x:refs/heads/x"],
        cwd=tmp_path,
        token=TOKEN,
    )
    runner.run(["index-pack", "--stdin", "--strict"], cwd=tmp_path)
    push, index = seen
    assert not any(TOKEN in arg for arg in push["args"])
    header = base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
    assert f"Authorization: Basic {header}" in push["env"].values()
    # A local git command never carries the token at all.
    assert not any(header in value for value in index["env"].values())
    # Hooks are off and the user's and system's git config are not read.
    keys = {
        push["env"][k]: push["env"][k.replace("KEY", "VALUE")]
        for k in push["env"]
        if k.startswith("GIT_CONFIG_KEY_")
    }
    assert keys["core.hooksPath"] == "/dev/null"
    assert keys["http.followRedirects"] == "false"
    # No repository but the server's own is ever opened: no file transport, no
    # safe.directory exception for folders someone else owns.
    assert keys["protocol.allow"] == "never" and "protocol.file.allow" not in keys
    assert "safe.directory" not in keys
    assert push["env"]["GIT_CONFIG_NOSYSTEM"] == "1"
    for path in tmp_path.rglob("*"):  # nothing with the token written to disk
        assert not path.is_file() or TOKEN.encode() not in path.read_bytes()
