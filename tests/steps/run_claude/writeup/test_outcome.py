"""How a session ended, from its exit code, result event and the supervisor's stop."""

from __future__ import annotations

import pytest

from tusk.steps.run_claude.session import passes as session_passes
from tusk.steps.run_claude.session.watch import StopReason
from tusk.steps.run_claude.writeup.outcome import classify
from tusk.steps.run_claude.writeup.publish import mention_reaction

SUCCESS = {"type": "result", "subtype": "success", "is_error": False, "result": "ok"}


def test_clean_success_is_completed() -> None:
    outcome = classify(exit_code=0, result=SUCCESS, stop=None)
    assert outcome.ok and outcome.kind == "completed"


def test_loop_kill_is_a_failure_even_with_the_expected_sigterm_exit() -> None:
    outcome = classify(exit_code=143, result=None, stop=StopReason("loop", "6 identical"))
    assert not outcome.ok and outcome.kind == "loop"
    assert outcome.detail == "6 identical"


def test_unexpected_exit_after_a_stop_is_mentioned() -> None:
    outcome = classify(exit_code=-9, result=None, stop=StopReason("timeout", "budget"))
    assert outcome.kind == "timeout" and "exit code -9" in outcome.detail


def test_a_run_a_person_stopped_reads_as_stopped_not_failed() -> None:
    stopped = classify(exit_code=143, result=None, stop=StopReason("stopped", "stopped by alice"))
    assert stopped.closes_as == "completed"
    assert stopped.mark == "⏹️" and session_passes.final_status(stopped).startswith("⏹️ ")
    assert mention_reaction(stopped) is None  # the mention keeps its 👀, no 😕
    failed = classify(exit_code=143, result=None, stop=StopReason("loop", "6 identical"))
    assert failed.mark == "❌" and mention_reaction(failed) == "confused"
    done = classify(exit_code=0, result=SUCCESS, stop=None)
    assert done.mark == "✅" and mention_reaction(done) == "rocket"


def test_api_error_result() -> None:
    result = {
        "subtype": "success",
        "is_error": True,
        "terminal_reason": "api_error",
        "api_error_status": 500,
        "result": "API Error: 500 Internal server error",
    }
    outcome = classify(exit_code=1, result=result, stop=None)
    assert outcome.kind == "api_error" and "status 500" in outcome.detail


def test_connection_refused_is_an_api_error_without_status() -> None:
    result = {
        "subtype": "success",
        "is_error": True,
        "api_error_status": None,
        "result": "API Error: Connection refused",
    }
    assert classify(exit_code=1, result=result, stop=None).kind == "api_error"


def test_max_turns() -> None:
    result = {
        "subtype": "error_max_turns",
        "is_error": True,
        "errors": ["Reached maximum number of turns (2)"],
    }
    outcome = classify(exit_code=1, result=result, stop=None)
    assert outcome.kind == "max_turns" and "maximum number of turns" in outcome.detail


def test_resume_of_unknown_session_is_an_error_result() -> None:
    result = {
        "subtype": "error_during_execution",
        "is_error": True,
        "errors": ["No conversation found with session ID: x"],
    }
    outcome = classify(exit_code=1, result=result, stop=None)
    assert outcome.kind == "error_result" and "No conversation found" in outcome.detail


@pytest.mark.parametrize("code", [1, 137, -9])
def test_no_result_event_is_a_crash(code: int) -> None:
    outcome = classify(exit_code=code, result=None, stop=None)
    assert outcome.kind == "crashed" and str(code) in outcome.detail


def test_non_zero_exit_after_a_good_result_is_still_a_failure() -> None:
    assert classify(exit_code=2, result=SUCCESS, stop=None).kind == "crashed"


def test_which_failures_leave_a_model_to_ask() -> None:
    loop = classify(exit_code=143, result=None, stop=StopReason("loop", "x"))
    crash = classify(exit_code=1, result=None, stop=None)
    assert loop.model_still_answers and not crash.model_still_answers


def test_a_pass_log_line_cannot_smuggle_a_workflow_command() -> None:
    # The result text is the model's: a line of its own would be a runner command.
    result = {
        "type": "result",
        "subtype": "success",
        "is_error": True,
        "result": "oops\n::set-output name=conclusion::success\n::stop-commands::x",
    }
    outcome = classify(exit_code=1, result=result, stop=None)
    line = session_passes.pass_log_line("Main session", 1.0, outcome)
    assert "\n" not in line and "\r" not in line
    assert line.startswith("Main session (1.0 s): Claude Code reported an error: ")
