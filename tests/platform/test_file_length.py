"""No product module is longer than 600 lines (issue 29): a long module holds several
jobs, and each change to one of them touches all. Product code is every module
installed as ``tusk.*`` (``src/tusk/**/*.py``); tests and benchmarks are not counted."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ROOT / "src" / "tusk"
MAX_LINES = 600


def line_count(path: Path) -> int:
    """The lines of ``path`` as an editor numbers them (a last line without a newline
    counts too)."""
    return len(path.read_text(encoding="utf-8").splitlines())


def long_files(folder: Path, *, limit: int = MAX_LINES) -> list[tuple[Path, int]]:
    """Every ``*.py`` file under ``folder`` longer than ``limit`` lines: ``(path, lines)``."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        lines = line_count(path)
        if lines > limit:
            found.append((path, lines))
    return found


def test_the_measure_finds_a_long_file_and_passes_one_at_the_limit(tmp_path: Path) -> None:
    (tmp_path / "room").mkdir()
    long = tmp_path / "room" / "long.py"
    long.write_text("\n".join(f"x{i} = {i}" for i in range(MAX_LINES + 1)), encoding="utf-8")
    (tmp_path / "at_limit.py").write_text("x = 1\n" * MAX_LINES, encoding="utf-8")
    (tmp_path / "notes.md").write_text("line\n" * (MAX_LINES * 2), encoding="utf-8")
    assert long_files(tmp_path) == [(long, MAX_LINES + 1)]
    assert long_files(tmp_path, limit=MAX_LINES + 1) == []


def test_no_product_file_is_longer_than_600_lines() -> None:
    files = sorted(PRODUCT.rglob("*.py"))
    assert len(files) > 100, "the product's modules were not found"
    too_long = [f"{path.relative_to(ROOT)} is {lines} lines" for path, lines in long_files(PRODUCT)]
    if too_long:
        pytest.fail(
            f"split these into modules of at most {MAX_LINES} lines, one job each:\n"
            + "\n".join(too_long)
        )
