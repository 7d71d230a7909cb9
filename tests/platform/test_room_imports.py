"""The rooms of ``src/tusk`` import each other in one direction only.

Each step (``tusk.steps.<step>``, one per composite action) imports only the shared
rooms and its own package: never another step, the poller, the MCP server, the
application or the local stand-ins; code two of them need lives in a shared room. And
no module outside the application (``tusk.cli``) imports the poller or the stand-ins,
except the poller and the stand-ins themselves: the application wires them together.
A sideways import would tie one part's release, tests and reading to another's
internals."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "tusk"
STEPS = sorted(path for path in (PACKAGE / "steps").iterdir() if (path / "__init__.py").is_file())
# The rooms a step must not reach into; ``tusk.steps.<own>`` is allowed for the step itself.
FORBIDDEN = ("tusk.steps", "tusk.poller", "tusk.mcp", "tusk.sandbox", "tusk.cli")
# What only the application may wire together, and the rooms that may import them.
WIRED = ("tusk.poller", "tusk.sandbox")
WIRING = ("cli", "poller", "sandbox")


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


def imports_of(folder: Path, forbidden: tuple[str, ...], root: Path) -> list[str]:
    """Each import in ``folder`` of a module under one of ``forbidden``, as ``file:line
    module``."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        for line, module in imported_modules(path.read_text(encoding="utf-8")):
            if any(module == bad or module.startswith(bad + ".") for bad in forbidden):
                found.append(f"{path.relative_to(root)}:{line} {module}")
    return found


def sideways_imports(action_dir: Path, root: Path = ROOT) -> list[str]:
    """Each import in the step package ``action_dir`` of another step, the poller, the
    MCP server, the application or the stand-ins, as ``file:line module``."""
    own = "tusk.steps." + action_dir.name
    found = []
    for path in sorted(action_dir.rglob("*.py")):
        for line, module in imported_modules(path.read_text(encoding="utf-8")):
            if module == own or module.startswith(own + "."):
                continue
            if module == "tusk.steps":
                continue  # the namespace itself holds nothing
            if any(module == bad or module.startswith(bad + ".") for bad in FORBIDDEN):
                found.append(f"{path.relative_to(root)}:{line} {module}")
    return found


@pytest.mark.parametrize("action_dir", STEPS, ids=lambda path: path.name)
def test_a_step_imports_only_the_shared_rooms_and_itself(action_dir: Path) -> None:
    assert sideways_imports(action_dir) == []


def test_the_steps_were_found() -> None:
    assert {path.name for path in STEPS} >= {"run_claude", "build_context", "go_away"}


@pytest.mark.parametrize(
    "room",
    sorted(p for p in PACKAGE.iterdir() if p.is_dir() and p.name not in (*WIRING, "__pycache__")),
    ids=lambda path: path.name,
)
def test_only_the_application_imports_the_poller_and_the_stand_ins(room: Path) -> None:
    assert imports_of(room, WIRED, ROOT) == []


def test_an_import_of_the_poller_outside_the_application_is_caught(tmp_path: Path) -> None:
    room = tmp_path / "mcp"
    room.mkdir()
    (room / "x.py").write_text("from tusk.poller.jobids import job_id\nimport tusk.cli\n")
    assert imports_of(room, WIRED, tmp_path) == [
        "mcp/x.py:1 tusk.poller.jobids",
        "mcp/x.py:1 tusk.poller.jobids.job_id",
    ]


def test_a_sideways_import_is_caught(tmp_path: Path) -> None:
    """The check itself: each kind of sideways import is found, own imports are not."""
    action = tmp_path / "steps" / "go_away"
    action.mkdir(parents=True)
    (action / "go_away.py").write_text(
        "from tusk.steps.go_away import main\n"
        "from tusk import trust\n"
        "import tusk.mcp.gate.policy\n"
        "from tusk.poller.mentions import is_go_away\n"
        "def late():\n"
        "    from tusk.steps import merge_shards\n"
        "    importlib.import_module('tusk.sandbox.world')\n",
        encoding="utf-8",
    )
    assert sorted(sideways_imports(action, root=tmp_path)) == [
        "steps/go_away/go_away.py:3 tusk.mcp.gate.policy",
        "steps/go_away/go_away.py:4 tusk.poller.mentions",
        "steps/go_away/go_away.py:4 tusk.poller.mentions.is_go_away",
        "steps/go_away/go_away.py:6 tusk.steps.merge_shards",
        "steps/go_away/go_away.py:7 tusk.sandbox.world",
    ]
