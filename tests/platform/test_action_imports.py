"""Each action imports only the shared package ``tusk`` and its own package: never
another action, the poller, the MCP server or the local stand-ins. Code two of
them need lives in ``tusk/``; a sideways import would tie one step's release,
tests and reading to another's internals."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ACTIONS = sorted(path.parent for path in (ROOT / "actions").glob("*/action.yml"))
# The top-level folders mapped under ``tusk.`` (pyproject's package-dir) that an action
# must not reach into; ``tusk.actions.<own>`` is allowed for the action itself.
FORBIDDEN = ("tusk.actions", "tusk.poller", "tusk.mcp_server", "tusk.sandbox")


def imported_modules(source: str) -> Iterator[tuple[int, str]]:
    """Every module ``source`` imports (at any depth, ``importlib`` by literal name too),
    as ``(line, dotted name)``; ``from tusk import poller`` counts as ``tusk.poller``."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"line {node.lineno}: relative import; import tusk.* by name"
            module = node.module or ""
            yield node.lineno, module
            for alias in node.names:
                yield node.lineno, f"{module}.{alias.name}"
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
            in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield node.lineno, node.args[0].value


def sideways_imports(action_dir: Path, root: Path = ROOT) -> list[str]:
    """Each import in ``action_dir`` of another action, the poller, the MCP server or
    the stand-ins, as ``file:line module``."""
    own = "tusk.actions." + action_dir.name.replace("-", "_")
    found = []
    for path in sorted(action_dir.rglob("*.py")):
        for line, module in imported_modules(path.read_text(encoding="utf-8")):
            if module == own or module.startswith(own + "."):
                continue
            if module == "tusk.actions":
                continue  # the namespace itself holds nothing
            if any(module == bad or module.startswith(bad + ".") for bad in FORBIDDEN):
                found.append(f"{path.relative_to(root)}:{line} {module}")
    return found


@pytest.mark.parametrize("action_dir", ACTIONS, ids=lambda path: path.name)
def test_an_action_imports_only_tusk_and_itself(action_dir: Path) -> None:
    assert sideways_imports(action_dir) == []


def test_a_sideways_import_is_caught(tmp_path: Path) -> None:
    """The check itself: each kind of sideways import is found, own imports are not."""
    action = tmp_path / "actions" / "go-away"
    action.mkdir(parents=True)
    (action / "go_away.py").write_text(
        "from tusk.actions.go_away import main\n"
        "from tusk import trust\n"
        "import tusk.mcp_server.policy\n"
        "from tusk.poller.mentions import is_go_away\n"
        "def late():\n"
        "    from tusk.actions import merge_shards\n"
        "    importlib.import_module('tusk.sandbox.world')\n",
        encoding="utf-8",
    )
    assert sorted(sideways_imports(action, root=tmp_path)) == [
        "actions/go-away/go_away.py:3 tusk.mcp_server.policy",
        "actions/go-away/go_away.py:4 tusk.poller.mentions",
        "actions/go-away/go_away.py:4 tusk.poller.mentions.is_go_away",
        "actions/go-away/go_away.py:6 tusk.actions.merge_shards",
        "actions/go-away/go_away.py:7 tusk.sandbox.world",
    ]
