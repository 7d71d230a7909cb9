"""ARCHITECTURE.md names every module of the package, in the row of its own package,
and names nothing else there: a module nobody described is a room nobody can find, and
a row naming a module that is gone misleads the next reader. A row's names are the
backticked ones outside parentheses (what each does is said inside them)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "tusk"
ROW = re.compile(r"^\| `(src/tusk/[^`]*)` \| (.*) \|$", re.M)
NAMED = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`")
TOKEN = re.compile(r"[()]|`[A-Za-z_][A-Za-z0-9_]*`")


def package_rows(text: str) -> dict[str, set[str]]:
    """Each table row whose first cell is a package folder, as folder -> the names it
    gives in backticks."""
    return {folder.rstrip("/"): set(NAMED.findall(cell)) for folder, cell in ROW.findall(text)}


def row_entries(text: str) -> dict[str, list[str]]:
    """Each package row's own entries: the backticked names outside parentheses."""
    found: dict[str, list[str]] = {}
    for folder, cell in ROW.findall(text):
        depth, names = 0, []
        for token in TOKEN.findall(cell):
            if token in "()":
                depth += 1 if token == "(" else -1
            elif depth == 0:
                names.append(token.strip("`"))
        found[folder.rstrip("/")] = names
    return found


def named_but_missing(entries: dict[str, list[str]], root: Path = ROOT) -> list[str]:
    """Entries that are neither a module nor a folder of their row's package."""
    missing = []
    for folder, names in entries.items():
        here = root / folder
        present = {p.stem for p in here.glob("*.py")} | {p.name for p in here.iterdir()}
        missing += [f"{folder}/{name}" for name in names if name not in present]
    return missing


def modules_by_package(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Each package folder (relative to the checkout) -> its modules' names."""
    found: dict[str, set[str]] = {}
    for init in sorted(package.rglob("__init__.py")):
        folder = init.parent
        names = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
        found[folder.relative_to(package.parents[1]).as_posix()] = names
    return found


def unnamed(rows: dict[str, set[str]], modules: dict[str, set[str]]) -> list[str]:
    """Modules missing from their package's row, and packages without a row."""
    missing = []
    for folder, names in modules.items():
        if folder not in rows:
            if names:
                missing.append(f"{folder}/ has no row")
            continue
        missing += [f"{folder}/{name}.py" for name in sorted(names - rows[folder])]
    return missing


def test_the_check_finds_a_module_left_out() -> None:
    rows = package_rows("| `src/tusk/text/` | `markers` (hidden markers), `render` |\n")
    modules = {"src/tusk/text": {"markers", "render", "mentions"}, "src/tusk/new": {"x"}}
    assert unnamed(rows, modules) == ["src/tusk/text/mentions.py", "src/tusk/new/ has no row"]


def test_every_module_is_named_in_architecture() -> None:
    rows = package_rows((ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8"))
    modules = modules_by_package()
    assert len(modules) > 10, "the package's modules were not found"
    assert unnamed(rows, modules) == []


def test_the_check_finds_a_row_naming_a_module_that_is_not_there(tmp_path: Path) -> None:
    (tmp_path / "src" / "tusk" / "text").mkdir(parents=True)
    (tmp_path / "src" / "tusk" / "text" / "markers.py").write_text("")
    entries = row_entries("| `src/tusk/text/` | `markers` (see `Marker`), `gone` |\n")
    assert entries == {"src/tusk/text": ["markers", "gone"]}
    assert named_but_missing(entries, tmp_path) == ["src/tusk/text/gone"]


def test_architecture_names_only_modules_that_exist() -> None:
    entries = row_entries((ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8"))
    assert len(entries) > 10
    assert named_but_missing(entries) == []
