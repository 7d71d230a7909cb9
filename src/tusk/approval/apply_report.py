"""What applying an approved set made, as the apply engine reports it to the apply step:
one line per write in ``RUN_DIR/apply-report.json``, read back by the step rather than
from the engine's output, whose last line a log message could push aside."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ValidationError

REPORT_FILE = "apply-report.json"


class ApplyStep(BaseModel):
    seq: int
    tool: str
    target: str
    ok: bool
    said: str


class ApplyReport(BaseModel):
    steps: list[ApplyStep] = []

    @property
    def ok(self) -> bool:
        return all(step.ok for step in self.steps)


def report_path(run_dir: Path) -> Path:
    return run_dir / REPORT_FILE


def write_report(run_dir: Path, report: ApplyReport) -> None:
    report_path(run_dir).write_text(report.model_dump_json(indent=1), encoding="utf-8")


def failure_of(run_dir: Path) -> str:
    """Why the apply stopped: its first write not made, as the engine said it; or that
    the engine left no report to read."""
    try:
        report = ApplyReport.model_validate_json(report_path(run_dir).read_text(encoding="utf-8"))
    except (OSError, ValidationError):
        return "the apply engine failed before it reported (see the step's log)"
    failed = next((step for step in report.steps if not step.ok), None)
    if failed is None:
        return "the apply engine failed after every write was made (see the step's log)"
    return f"NOT made: {failed.target}: {failed.said}"
