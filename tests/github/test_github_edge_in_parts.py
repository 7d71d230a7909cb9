"""The GitHub edge stays in parts with one job each: no module of it over 600 lines, and the
names callers and the docs take from ``tusk.github.gateway`` still come from there."""

from __future__ import annotations

from pathlib import Path

import tusk.github
from tusk.github import errors, gateway, ledger, retries

MAX_LINES = 600


def test_no_module_of_the_github_edge_is_over_600_lines() -> None:
    folder = Path(tusk.github.__file__).parent
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in folder.glob("*.py")}
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}


def test_the_gateway_still_exports_what_moved_to_its_parts() -> None:
    for part in (errors, retries, ledger):
        # The classes and functions defined there that the gateway imports.
        moved = [
            name
            for name, value in vars(part).items()
            if not name.startswith("_") and getattr(value, "__module__", None) == part.__name__
        ]
        assert moved
        for name in moved:
            if getattr(part, name) is getattr(gateway, name, None):
                assert name in gateway.__all__, f"{part.__name__}.{name} not exported"
    for name in gateway.__all__:
        assert hasattr(gateway, name), name
    assert gateway.GitHubError is errors.GitHubError
    assert gateway.RequestLedger is ledger.RequestLedger
    assert gateway.retry_delay is retries.retry_delay
