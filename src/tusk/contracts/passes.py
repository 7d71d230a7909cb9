"""Which tools the current pass may use, as the supervisor says (``RUN_DIR/pass.json``).

The supervisor writes the file before each Claude Code session, in the
runner-only run folder the agent cannot reach; the MCP server reads it at
every call. A missing, unreadable or malformed file allows nothing: the server
fails closed. ``{"pass": "history", "tools": ["history"]}`` allows one tool;
``"tools": null`` allows all of them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tusk.contracts.models import PermissionConfig

PASS_FILE = "pass.json"
# The run's permissions once a follow-up narrowed them (MISSION C1); absent: the
# context's. The server reads it before each write.
NARROWED_FILE = "narrowed-permissions.json"
# A person stopped the run (``@bot stop``, MISSION C2): the server refuses every write.
STOPPED_FILE = "stopped.json"


@dataclass(frozen=True)
class CurrentPass:
    name: str
    tools: frozenset[str] | None  # None: every tool of the server

    def allows(self, tool: str) -> bool:
        return self.tools is None or tool in self.tools


def write_pass(run_dir: Path, name: str, tools: Sequence[str] | None) -> None:
    data = {"pass": name, "tools": None if tools is None else sorted(tools)}
    path = run_dir / PASS_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data) + "\n", encoding="utf-8")
    os.chmod(tmp, 0o600)
    tmp.replace(path)  # the server reads the old pass or the new one, never half


def parse_pass(text: str) -> CurrentPass | None:
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("pass"), str):
        return None
    tools = data.get("tools")
    if tools is None:
        return CurrentPass(data["pass"], None)
    if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
        return None
    return CurrentPass(data["pass"], frozenset(tools))


def read_pass(path: Path) -> CurrentPass | None:
    """The current pass, or None when the file says nothing usable (allow nothing)."""
    try:
        return parse_pass(path.read_text(encoding="utf-8"))
    except OSError:
        return None


def write_narrowed(run_dir: Path, permissions: PermissionConfig) -> None:
    path = run_dir / NARROWED_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(permissions.model_dump_json() + "\n", encoding="utf-8")
    os.chmod(tmp, 0o600)
    tmp.replace(path)


NO_WRITES = PermissionConfig(operations=(), error="the narrowed permissions could not be read")


def read_narrowed(run_dir: Path) -> PermissionConfig | None:
    """The narrowed permissions, None when no follow-up narrowed the run. A file that is
    there but unreadable allows no write: the server fails closed."""
    path = run_dir / NARROWED_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError:
        return NO_WRITES
    try:
        return PermissionConfig.model_validate_json(text)
    except ValueError:
        return NO_WRITES


def write_stopped(run_dir: Path, said: str) -> None:
    path = run_dir / STOPPED_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"said": said}) + "\n", encoding="utf-8")
    os.chmod(tmp, 0o600)
    tmp.replace(path)


def read_stopped(run_dir: Path) -> str | None:
    """Who stopped the run and why, or None while it runs. A file there but unreadable
    still says the run was stopped."""
    path = run_dir / STOPPED_FILE
    if not path.exists():
        return None
    try:
        said = json.loads(path.read_text(encoding="utf-8")).get("said")
    except (OSError, ValueError, AttributeError):
        said = None
    return said if isinstance(said, str) and said else "stopped on the thread"
