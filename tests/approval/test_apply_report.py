"""The apply engine's report, read back by the apply step: the first write not made is
the reason a set was not fully applied, whatever the engine printed after it."""

from __future__ import annotations

from pathlib import Path

from tusk.approval.apply_report import (
    ApplyReport,
    ApplyStep,
    failure_of,
    report_path,
    write_report,
)


def step(seq: int, ok: bool, said: str) -> ApplyStep:
    return ApplyStep(
        seq=seq, tool="create_comment", target=f"alice/widgets#{seq}", ok=ok, said=said
    )


def test_the_first_write_not_made_is_the_reason(tmp_path: Path) -> None:
    report = ApplyReport(steps=[step(0, True, "made"), step(1, False, "LIMIT_EXCEEDED: two")])
    write_report(tmp_path, report)
    assert not ApplyReport.model_validate_json(report_path(tmp_path).read_text()).ok
    assert failure_of(tmp_path) == "NOT made: alice/widgets#1: LIMIT_EXCEEDED: two"


def test_an_engine_that_left_no_report_is_said_to_have_failed_before_it(tmp_path: Path) -> None:
    assert failure_of(tmp_path) == (
        "the apply engine failed before it reported (see the step's log)"
    )
    report_path(tmp_path).write_text("{not json", encoding="utf-8")
    assert failure_of(tmp_path).startswith("the apply engine failed before it reported")


def test_a_report_without_a_failed_write_says_the_engine_failed_after(tmp_path: Path) -> None:
    write_report(tmp_path, ApplyReport(steps=[step(0, True, "made")]))
    assert "after every write was made" in failure_of(tmp_path)
