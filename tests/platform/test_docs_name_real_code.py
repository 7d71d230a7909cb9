"""Every dotted name a document gives for Tusk's code (`tusk.mcp.server.transport.BearerGate`)
is importable as written: a module that was moved or split must not leave the docs
pointing at its old place."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted(
    [*ROOT.glob("*.md"), *ROOT.glob("actions/*/README.md"), *(ROOT / "docs").rglob("*.md")]
)
DOTTED = re.compile(r"`(tusk(?:\.[A-Za-z_][A-Za-z0-9_]*)+)")
NOT_CODE = {"tusk.yml"}  # the configuration file, not a module


def resolves(dotted: str) -> bool:
    """Whether ``dotted`` is a module, or an attribute path inside the longest module
    prefix of it that imports."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            if not hasattr(found, name):
                return False
            found = getattr(found, name)
        return True
    return False


def test_the_check_tells_a_real_name_from_a_stale_one() -> None:
    assert resolves("tusk.github.gateway.Gateway")
    assert resolves("tusk.steps.run_claude.session")
    assert not resolves("tusk.steps.run_claude.supervisor.mcp_server_env")
    assert not resolves("tusk.github.gateway.NoSuchThing")


def test_every_dotted_name_in_the_docs_is_real() -> None:
    named = {
        (path.relative_to(ROOT).as_posix(), ref)
        for path in DOCS
        for ref in DOTTED.findall(path.read_text(encoding="utf-8"))
        if ref not in NOT_CODE
    }
    assert len(named) > 20, "the docs' code names were not found"
    stale = sorted(f"{doc}: {ref}" for doc, ref in named if not resolves(ref))
    if stale:
        pytest.fail("these names in the docs no longer exist:\n" + "\n".join(stale))
