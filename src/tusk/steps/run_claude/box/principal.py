"""Who a process of the run runs as, and the paths every part of the box shares."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tusk.errors import UserError

SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
AGENT_SHELL = "/bin/bash"


class IsolationError(UserError):
    """Isolation could not be set up; under Actions the run must not go on."""


@dataclass(frozen=True)
class Principal:
    """A Linux identity processes are started as."""

    name: str
    uid: int
    gid: int
    home: Path


SBIN_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
USERS_ROOT = Path("/home")  # each run's folder is /home/<its user>
