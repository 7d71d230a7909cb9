"""README documents the settings that bound resuming and the limits across runs (the
per-requester spend cap among them), each row with the default Tusk really uses."""

from __future__ import annotations

from pathlib import Path

import pytest

from tusk.contracts.config import Limits

README = Path(__file__).resolve().parents[2] / "README.md"
DOCUMENTED = (
    "resume_chars",
    "resume_runs",
    "requester_budget_usd",
    "daily_budget_usd",
    "runs_per_requester",
    "runs_per_repository",
    "usage_window_hours",
)


def row_default(text: str, name: str) -> str | None:
    """The default README's settings table gives ``limits.<name>``, or None."""
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0] == f"`limits.{name}`":
            return cells[1].strip("`")
    return None


def spelled(value: object) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def test_the_row_reader_finds_a_row_and_misses_an_absent_one() -> None:
    text = "| setting | default |\n|---|---|\n| `limits.resume_runs` | `5` | runs |\n"
    assert row_default(text, "resume_runs") == "5"
    assert row_default(text, "resume_chars") is None


@pytest.mark.parametrize("name", DOCUMENTED)
def test_readme_documents_the_limit_with_its_default(name: str) -> None:
    default = Limits.model_fields[name].default
    assert row_default(README.read_text(encoding="utf-8"), name) == spelled(default)


def test_readme_documents_resume_the_marker_s_limits_and_the_requester_standing() -> None:
    text = README.read_text(encoding="utf-8")
    assert "## A later mention resumes the conversation" in text
    assert "[permissions: budget=0.5, turns=10, minutes=5]" in text
    assert "`tusk usage` shows the login" in text
