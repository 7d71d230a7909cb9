"""Tests that create Linux users need root: in CI (root) they must run, elsewhere they
skip with the reason printed."""

from __future__ import annotations

import os

import pytest


def require_root(needs: str) -> None:
    """Skip, saying why, unless this process is root; fail instead when ``CI=true``."""
    if os.geteuid() == 0:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{needs} need root in CI")
    reason = f"{needs} need root; run them as root (CI does)"
    print(f"skipping: {reason}")
    pytest.skip(reason)
