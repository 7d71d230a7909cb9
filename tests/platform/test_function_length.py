"""No product function is longer than 80 lines (issue 19): a long function hides
several jobs, and its parts cannot be read or tested one at a time. Product code is
every package installed as ``tusk.*``; tests and benchmarks are not counted."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("src/tusk",)
MAX_LINES = 80


def long_functions(source: str, *, limit: int = MAX_LINES) -> list[tuple[str, int, int]]:
    """Every function (methods and nested ones too) of ``source`` longer than ``limit``
    lines, ``def`` line to last line, decorators left out: ``(name, line, length)``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > limit:
                found.append((node.name, node.lineno, length))
    return found


def test_the_measure_counts_a_long_function_and_passes_a_short_one() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES))
    source = f"def long():\n{body}\n\n\nclass A:\n    def short(self):\n        return 1\n"
    assert long_functions(source) == [("long", 1, MAX_LINES + 1)]
    assert long_functions(source, limit=MAX_LINES + 1) == []


def test_no_product_function_is_longer_than_80_lines() -> None:
    files = [path for folder in PRODUCT for path in sorted((ROOT / folder).rglob("*.py"))]
    assert len(files) > 100, "the product's modules were not found"
    too_long = [
        f"{path.relative_to(ROOT)}:{line} {name}() is {length} lines"
        for path in files
        for name, line, length in long_functions(path.read_text(encoding="utf-8"))
    ]
    if too_long:
        pytest.fail(
            f"split these into parts of at most {MAX_LINES} lines, one job each:\n"
            + "\n".join(too_long)
        )
