"""Settings for one git command, passed through git's own environment.

A token handed to git this way never lands in a ``.git/config`` (which the
agent could read) or in argv (``/proc/<pid>/cmdline`` is world-readable).
"""

from __future__ import annotations

import base64
from collections.abc import Sequence


def basic_auth_header(token: str) -> str:
    """The ``http.extraHeader`` value GitHub accepts for a token over HTTPS."""
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    return f"Authorization: Basic {basic}"


def config_env(settings: Sequence[tuple[str, str]]) -> dict[str, str]:
    """``git -c key=value`` for every pair, as ``GIT_CONFIG_*`` variables instead."""
    env = {"GIT_CONFIG_COUNT": str(len(settings))}
    for index, (key, value) in enumerate(settings):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    return env
