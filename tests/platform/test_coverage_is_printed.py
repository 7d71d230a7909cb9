"""scripts/test prints the suite's branch coverage, so gaps are visible (not a gate)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_scripts_test_runs_pytest_measuring_coverage_without_a_threshold() -> None:
    script = (ROOT / "scripts" / "test").read_text(encoding="utf-8")
    (pytest_line,) = [line for line in script.splitlines() if "python -m pytest" in line]
    assert "--cov " in pytest_line and "--cov-report=term" in pytest_line
    assert "--cov-fail-under" not in script  # printed, not gated
    assert (ROOT / ".ci" / "run").read_text(encoding="utf-8").count("scripts/test") == 1


def test_coverage_measures_branches_of_tusk_and_the_tool_is_a_dev_dependency() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    run = project["tool"]["coverage"]["run"]
    assert run["branch"] is True and run["source_pkgs"] == ["tusk"]
    assert "fail_under" not in project["tool"]["coverage"].get("report", {})
    dev = project["project"]["optional-dependencies"]["dev"]
    assert any(re.match(r"pytest-cov\b", requirement) for requirement in dev)
