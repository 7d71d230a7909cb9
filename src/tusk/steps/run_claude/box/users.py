"""The run's own Linux user (MISSION T3, T5): decided, created, checked, deleted.

Each run has its own Linux user, created for it and deleted when it ends
(``create_run_user``, ``delete_run_user``): its name comes from the Actions run
id and attempt plus a random suffix, so two runs on one host (several runner
processes, two deliveries of one job, act replays) never share a user, a
folder or a process list. A uid once another run's is cleared first
(``cleanup.clear_uid``): useradd hands deleted users' uids out again.
"""

from __future__ import annotations

import grp
import os
import pwd
import re
import secrets
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from tusk.steps.run_claude.box import cleanup
from tusk.steps.run_claude.box.principal import (
    AGENT_SHELL,
    SBIN_PATH,
    USERS_ROOT,
    IsolationError,
    Principal,
)


@dataclass(frozen=True)
class Decision:
    enabled: bool
    reason: str


def decide(*, in_actions: bool, euid: int) -> Decision:
    """Isolation is mandatory in Actions; elsewhere it needs root or is plainly off."""
    if euid == 0:
        return Decision(True, "Claude Code runs as a separate unprivileged user")
    if in_actions:
        raise IsolationError(
            "User isolation cannot be set up: this step is not running as root",
            "Under GitHub Actions Claude Code must run as a separate Linux user. The "
            "run-claude action re-runs itself with `sudo`; make sure the runner has "
            "passwordless sudo (GitHub-hosted runners do), or run the job as root.",
        )
    return Decision(
        False,
        "OFF: not root, so no separate user can be created; Claude Code runs as the "
        "current user and can read whatever this user can (fine for a local demo, "
        "never for real tokens)",
    )


# --------------------------------------------------------------------------- users


def current_principal() -> Principal:
    entry = pwd.getpwuid(os.getuid())
    return Principal(entry.pw_name, entry.pw_uid, entry.pw_gid, Path(entry.pw_dir))


def runner_principal(sudo_uid: int | None) -> Principal:
    """Who the MCP server runs as: the user who called sudo, else the current user."""
    if os.geteuid() == 0 and sudo_uid:
        entry = pwd.getpwuid(sudo_uid)
        return Principal(entry.pw_name, entry.pw_uid, entry.pw_gid, Path(entry.pw_dir))
    return current_principal()


def ensure_user(name: str, *, forbidden_uids: Iterable[int] = ()) -> Principal:
    """Create ``name`` (with its own home) or reuse it; never root or the runner."""
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        completed = subprocess.run(
            ["useradd", "--create-home", "--user-group", "--shell", AGENT_SHELL, name],
            capture_output=True,
            text=True,
            check=False,
            env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
        )
        if completed.returncode != 0:
            raise IsolationError(
                f"Could not create the agent user {name!r}",
                f"useradd said: {completed.stderr.strip()}. Create the user yourself, or "
                "set agent.linux_user in tusk.yml to an existing unprivileged user.",
            ) from None
        entry = pwd.getpwnam(name)
    if entry.pw_uid == 0 or entry.pw_uid in set(forbidden_uids):
        raise IsolationError(
            f"The agent user {name!r} is root or the runner itself (uid {entry.pw_uid})",
            "Set agent.linux_user in tusk.yml to a dedicated unprivileged user.",
        )
    privileged = sorted(privileged_groups(name, entry.pw_gid))
    if privileged:
        raise IsolationError(
            f"The agent user {name!r} belongs to privileged group(s): {', '.join(privileged)}",
            "Membership of these groups leads to root. Remove the user from them, or set "
            "agent.linux_user in tusk.yml to a dedicated unprivileged user.",
        )
    home = Path(entry.pw_dir)
    home.mkdir(parents=True, exist_ok=True)
    os.chown(home, entry.pw_uid, entry.pw_gid)
    os.chmod(home, 0o711)  # others may pass through to a run's workspace, never list
    return Principal(name, entry.pw_uid, entry.pw_gid, home)


MAX_USER_NAME = 32  # useradd's limit on Debian and Ubuntu
# useradd/userdel exit codes (shadow-utils): 9 the name is taken, 10 /etc/passwd is
# locked by a concurrent useradd, 6 no such user.
NAME_IN_USE, PASSWD_LOCKED, NO_SUCH_USER = 9, 10, 6


def run_user_name(prefix: str, key: str, suffix: str) -> str:
    """``<prefix>-<run id>-<attempt>-<suffix>``, within useradd's 32 characters.

    The prefix gives way first; the run key and the random suffix always stay."""
    tail = f"-{key}-{suffix}"
    clean = re.sub(r"[^a-z0-9_-]", "", prefix.lower()).strip("-") or "tusk"
    if not clean[0].isalpha():
        clean = f"t{clean}"
    return clean[: max(1, MAX_USER_NAME - len(tail))] + tail


def create_run_user(
    prefix: str,
    key: str,
    *,
    forbidden_uids: Iterable[int] = (),
    attempts: int = 8,
    sleep: Callable[[float], None] = time.sleep,
) -> Principal:
    """Create this run's own user; its passwd home is ``/home/<name>/home`` (made by
    ``prepare_run_dirs``). Never reuses a user: a taken name means another run."""
    said = "nothing (no attempt made)"
    for attempt in range(attempts):
        name = run_user_name(prefix, key, secrets.token_hex(3))
        completed = subprocess.run(
            [
                "useradd",
                "--no-create-home",
                "--home-dir",
                str(USERS_ROOT / name / "home"),
                "--user-group",
                "--shell",
                AGENT_SHELL,
                name,
            ],
            capture_output=True,
            text=True,
            check=False,
            env={"PATH": SBIN_PATH},
        )
        if completed.returncode == 0:
            entry = pwd.getpwnam(name)
            user = Principal(name, entry.pw_uid, entry.pw_gid, Path(entry.pw_dir))
            if entry.pw_uid == 0 or entry.pw_uid in set(forbidden_uids):
                delete_run_user(user)
                raise IsolationError(
                    f"The new agent user {name!r} got uid {entry.pw_uid}, root's or the runner's",
                    "Check /etc/login.defs (UID_MIN) on this machine.",
                )
            cleanup.clear_uid(user)  # a uid once another run's: nothing of that run may remain
            return user
        said = completed.stderr.strip()
        if completed.returncode not in (NAME_IN_USE, PASSWD_LOCKED):
            break
        sleep(0.05 * (attempt + 1))  # another run is adding its own user right now
    raise IsolationError(
        "Could not create this run's agent user",
        f"useradd said: {said}. The step must run as root (or with "
        "passwordless sudo) on a machine with useradd (package passwd).",
    )


def delete_run_user(user: Principal, *, sleep: Callable[[float], None] = time.sleep) -> bool:
    """Delete this run's user and its group, its keyrings emptied first; its files go
    with ``remove_agent_traces``. Returns whether the user existed."""
    # The kernel keeps a uid's keyrings past userdel, for the next user of that uid.
    cleanup.clear_keyrings(user.uid, user.gid)
    said = ""
    for attempt in range(8):
        completed = subprocess.run(
            ["userdel", user.name],
            capture_output=True,
            text=True,
            check=False,
            env={"PATH": SBIN_PATH},
        )
        if completed.returncode == 0:
            return True
        if completed.returncode == NO_SUCH_USER:
            return False
        said = completed.stderr.strip()
        sleep(0.05 * (attempt + 1))  # /etc/passwd locked, or the last process still exiting
    raise IsolationError(
        f"Could not delete the agent user {user.name!r}",
        f"userdel said: {said}. Delete it by hand: userdel {user.name}",
    )


PRIVILEGED_GROUPS = frozenset(
    {"root", "sudo", "wheel", "admin", "adm", "docker", "lxd", "disk", "shadow", "systemd-journal"}
)


def privileged_groups(name: str, gid: int) -> set[str]:
    """The groups of ``name`` that are as good as root (sudo rules, the docker socket...)."""
    found = set()
    for group_id in os.getgrouplist(name, gid):
        try:
            group = grp.getgrgid(group_id).gr_name
        except KeyError:
            continue
        if group in PRIVILEGED_GROUPS:
            found.add(group)
    return found
