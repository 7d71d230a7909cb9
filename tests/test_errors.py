"""Errors reach people the right way: user errors as annotations, bugs with their traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tusk.actions_edge import report_and_exit_code
from tusk.errors import ConfigError, UserError
from tusk.github.gateway import NotFound, TransportError


@pytest.fixture
def in_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")


@pytest.fixture
def on_a_laptop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)


def raised(error: BaseException) -> BaseException:
    try:
        raise error
    except BaseException as caught:
        return caught


def test_user_error_becomes_an_annotation_and_a_summary_paragraph(
    in_actions: None,
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


def test_user_error_on_a_laptop_is_said_once_without_annotation(
    on_a_laptop: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert report_and_exit_code(UserError("No shard 2 of job x", "Re-dispatch the job.")) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "error: No shard 2 of job x\nRe-dispatch the job.\n"


def test_github_error_is_one_annotation_with_its_advice_and_no_traceback(
    in_actions: None, capsys: pytest.CaptureFixture[str]
) -> None:
    error = NotFound(
        "not found", status=404, method="GET", path="/repos/a/b", hint="Check the name"
    )
    assert report_and_exit_code(raised(error)) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    assert captured.out.startswith("::error title=Tusk stopped::GET /repos/a/b: not found")


def test_unreachable_github_is_one_line_and_debug_adds_the_traceback(
    on_a_laptop: None, capsys: pytest.CaptureFixture[str]
) -> None:
    error = TransportError(
        "could not reach GitHub after 5 attempt(s): Connection refused",
        method="GET",
        path="/notifications",
        hint="Check TUSK_GITHUB_API_URL (http://127.0.0.1:9) and the network",
    )
    assert report_and_exit_code(raised(error)) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    assert captured.err.splitlines() == [
        "error: Tusk stopped: GET /notifications: could not reach GitHub after"
        " 5 attempt(s): Connection refused. Check TUSK_GITHUB_API_URL (http://127.0.0.1:9)"
        " and the network",
        "(run again with --debug for the traceback)",
    ]
    assert report_and_exit_code(raised(error), debug=True) == 1
    assert "Traceback" in capsys.readouterr().err


def test_bug_is_reported_as_unexpected_with_its_traceback(
    in_actions: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert report_and_exit_code(raised(KeyError("jobid"))) == 1
    captured = capsys.readouterr()
    assert "Traceback" in captured.err
    assert captured.out.startswith("::error::Tusk failed unexpectedly: KeyError")
