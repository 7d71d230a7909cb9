"""Errors reach people the right way: user errors as annotations, bugs with their traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tusk.errors import ConfigError, UserError, report_and_exit_code
from tusk.github import NotFound


def raised(error: BaseException) -> BaseException:
    try:
        raise error
    except BaseException as caught:
        return caught


def test_user_error_becomes_an_annotation_and_a_summary_paragraph(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code = report_and_exit_code(UserError("No shard 2 of job x", "Re-dispatch the job."))
    captured = capsys.readouterr()
    assert code == 1
    assert captured.out == "::error title=No shard 2 of job x::Re-dispatch the job.\n"
    assert "Traceback" not in captured.err
    assert (
        summary.read_text(encoding="utf-8")
        == "### ❌ No shard 2 of job x\n\nRe-dispatch the job.\n"
    )


def test_config_error_lists_every_problem() -> None:
    error = ConfigError("tusk.yml", ["bot: required key is missing", "staged: bad"])
    assert error.title == "tusk.yml: 2 problem(s) in the configuration"
    assert "  - bot: required key is missing\n  - staged: bad\n" in error.hint


def test_github_error_keeps_its_traceback_and_its_advice(
    capsys: pytest.CaptureFixture[str],
) -> None:
    error = NotFound(
        "not found", status=404, method="GET", path="/repos/a/b", hint="Check the name"
    )
    assert report_and_exit_code(raised(error)) == 1
    captured = capsys.readouterr()
    assert "Traceback" in captured.err
    assert captured.out.startswith(
        "::error title=Tusk stopped%3A NotFound::GET /repos/a/b: not found"
    )


def test_bug_is_reported_as_unexpected_with_its_traceback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert report_and_exit_code(raised(KeyError("jobid"))) == 1
    captured = capsys.readouterr()
    assert "Traceback" in captured.err
    assert captured.out.startswith("::error::Tusk failed unexpectedly: KeyError")
