"""Every room under ``src/tusk`` says in its ``__init__`` what each module (and each room
inside it) holds, and names only modules that are there."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "tusk"
DESCRIBED = sorted(p.parent for p in PACKAGE.rglob("__init__.py"))
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


def test_every_room_is_checked() -> None:
    assert {PACKAGE, PACKAGE / "steps" / "undo", PACKAGE / "sandbox", PACKAGE / "text"} <= set(
        DESCRIBED
    )


def test_the_check_finds_a_module_left_out_and_one_that_is_not_there(tmp_path: Path) -> None:
    (tmp_path / "__init__.py").write_text(
        '"""A room.\n\n- ``kept``: here.\n- ``gone``: moved away.\n"""\n', encoding="utf-8"
    )
    (tmp_path / "kept.py").write_text("", encoding="utf-8")
    (tmp_path / "new.py").write_text("", encoding="utf-8")
    assert described(tmp_path) == {"kept", "gone"}
    assert modules(tmp_path) == {"kept", "new"}
