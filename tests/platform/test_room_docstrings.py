"""The rooms the reshaping made say in their ``__init__`` what each module holds, and
name only modules that are there: the MCP server's rooms, the deployment's and
approval's. (The other rooms are described in ARCHITECTURE.md's table.)"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "tusk"
DESCRIBED = sorted(
    [
        *(p.parent for p in (PACKAGE / "mcp").rglob("__init__.py")),
        PACKAGE / "cli" / "deploy",
        PACKAGE / "approval",
    ]
)
ENTRY = re.compile(r"^- ``([a-z_]+)``|``([a-z_]+)``(?=:| \()", re.M)


def described(folder: Path) -> set[str]:
    """The modules a room's ``__init__`` describes: each ``- ``name``:`` entry."""
    doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8")))
    return {a or b for a, b in ENTRY.findall(doc or "")}


def modules(folder: Path) -> set[str]:
    found = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    return found | {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}


@pytest.mark.parametrize("folder", DESCRIBED, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_a_rooms_init_describes_its_modules_and_nothing_else(folder: Path) -> None:
    assert described(folder) == modules(folder)
