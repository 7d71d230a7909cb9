"""The shell Claude Code runs its tools in: bash in a user and PID namespace of its own.

Claude Code runs non-dumpable in its box (``bwrap``), so its tools may not take its
descriptors or memory; in a PID namespace of their own they do not even see it to
signal (``kill``, ``pidfd_open``: its pid is not theirs to name). Without
CAP_SYS_ADMIN a PID namespace needs a user namespace; ``unshare`` makes both and
maps the agent's own uid and group onto themselves, so files and permissions are
as before. ``/proc`` stays the box's (a fresh one is refused under its locked
``/proc``): the tools can list Claude Code's pid, never reach it.

Some kernels refuse a user namespace to an unprivileged user (Ubuntu's
``kernel.apparmor_restrict_unprivileged_userns``, ``user.max_user_namespaces=0``):
``problem`` tries it once in a box, and without it the tools run in plain bash,
sharing Claude Code's PID namespace, which the isolation line says.

The script is run by bash first, which sets the effective group back to the real
one (Claude Code's differs: that is what keeps it non-dumpable), so ``unshare`` is
dumpable and may write its own ``uid_map``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from tusk.steps.run_claude.box import bwrap
from tusk.steps.run_claude.box.principal import AGENT_SHELL, SBIN_PATH, Principal

SCRIPT_NAME = "tools-shell"


def unshare_argv(unshare: str) -> str:
    """The shell words that run the rest in a new user and PID namespace; the child is
    killed with ``unshare`` (``--kill-child``), so ending it ends the tool."""
    return f'{unshare} --user --map-user="$UID" --map-group="$(id -g)" --pid --fork --kill-child --'


def script(unshare: str) -> str:
    """The tools' shell: ``bash ARGS`` (Claude Code's ``-c -l COMMAND``) in its namespaces."""
    return f'#!{AGENT_SHELL}\nexec {unshare_argv(unshare)} {AGENT_SHELL} "$@"\n'


def unshare_binary() -> str | None:
    return shutil.which("unshare", path=SBIN_PATH)


def problem(
    user: Principal,
    base: Path,
    *,
    tools: bwrap.Tools,
    unshare: str,
    run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run,
) -> str | None:
    """Why the tools cannot have namespaces of their own here (None when they can),
    found by making them once, in a box, around ``true``."""
    probe = (AGENT_SHELL, "-c", f"exec {unshare_argv(unshare)} true")
    return bwrap.problem(user, base, tools=tools, run=run, inside=probe)


def place(folder: Path, unshare: str) -> Path:
    """The script in the run's ``bin`` folder: root's, readable and run by all, bound
    read-only into the box at ``bwrap.TOOLS_SHELL``."""
    target = folder / SCRIPT_NAME
    target.write_text(script(unshare), encoding="utf-8")
    os.chmod(target, 0o755)
    return target
