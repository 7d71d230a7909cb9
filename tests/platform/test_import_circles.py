"""No module of ``src/tusk`` imports itself back through others: a circle makes the
modules in it one module in all but name (none can be read, tested or moved alone), and
an import at function level hides it rather than breaking it.

A circle still to break would be named in ``STILL_TO_BREAK``, so that a new one fails
and one broken must be struck off; there is none."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tests.platform.test_room_imports import imported_modules

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "tusk"
STILL_TO_BREAK: list[list[str]] = []


def module_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Each module of ``package`` -> the modules of it that it imports (at any depth)."""
    paths = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        paths[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return {
        name: {
            module
            for _, module in imported_modules(path.read_text(encoding="utf-8"))
            if module in paths and module != name
        }
        for name, path in paths.items()
    }


def circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of two modules or more, each sorted (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_the_check_finds_a_circle_hidden_in_a_function(tmp_path: Path) -> None:
    package = tmp_path / "tusk"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from tusk.b import x\n")
    (package / "b.py").write_text("def x():\n    from tusk import a\n")
    (package / "c.py").write_text("import tusk.a\n")
    assert circles(module_graph(package)) == [["tusk.a", "tusk.b"]]


def test_no_module_imports_itself_back_but_those_still_to_break() -> None:
    assert circles(module_graph()) == STILL_TO_BREAK
