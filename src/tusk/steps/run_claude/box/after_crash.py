"""The cleanup step's work after a crash: whatever a run left behind, and only what this
run made, as ``RUN_DIR/cleanup.json`` names it (``cleanup.record`` writes it as the run
goes): the MCP server and egress proxy it started, its user's processes, folders and
IPC, and the user itself."""

from __future__ import annotations

import json
import os
import pwd
import signal
from pathlib import Path

from tusk.steps.run_claude.box import egress, users
from tusk.steps.run_claude.box.cleanup import CLEANUP_FILE, end_processes_of, remove_agent_traces
from tusk.steps.run_claude.box.folders import run_dirs
from tusk.steps.run_claude.box.principal import Principal


def clean(run_dir: Path) -> list[str]:
    """Whatever a crashed run left behind, and only what this run made (as
    ``RUN_DIR/cleanup.json`` names it); returns what it did."""
    path = run_dir / CLEANUP_FILE
    if not path.is_file():
        return ["nothing recorded; nothing to clean"]
    data = json.loads(path.read_text(encoding="utf-8"))
    done = []
    pid = data.get("mcp_pid")
    if isinstance(pid, int) and is_mcp_server(pid, run_dir):
        os.kill(pid, signal.SIGKILL)
        done.append(f"stopped the MCP server (pid {pid})")
    agent = recorded_user(data)
    if agent is not None:
        killed = end_processes_of(agent)
        done.append(f"ended {len(killed)} leftover process(es) of {agent.name}")
    pid, config = data.get("egress_pid"), data.get("egress_config")
    if isinstance(pid, int) and isinstance(config, str) and egress.is_egress_proxy(pid, config):
        os.kill(pid, signal.SIGKILL)
        done.append(f"stopped the egress proxy (pid {pid})")
    base = Path(data["base"]) if data.get("base") else None
    if base is not None and base.exists():
        remove_agent_traces(run_dirs(base), agent, scan_host=not data.get("boxed", False))
        done.append(f"removed {base}")
    if agent is not None and users.delete_run_user(agent):
        done.append(f"deleted the user {agent.name}")
    return done


def recorded_user(data: dict[str, object]) -> Principal | None:
    """The run's user as recorded, if the system still knows it by that name and uid."""
    name, uid = data.get("agent_user"), data.get("agent_uid")
    if not isinstance(name, str) or not isinstance(uid, int):
        return None
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        return None
    if entry.pw_uid != uid or uid == 0:
        return None  # not the user this run made
    return Principal(name, uid, entry.pw_gid, Path(entry.pw_dir))


def is_mcp_server(pid: int, run_dir: Path) -> bool:
    """Whether ``pid`` is this run's MCP server: its pid may be another's by now."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"mcp" in cmdline and b"serve" in cmdline and os.fsencode(run_dir) in cmdline
