"""The resume benchmark (``bench/bench_resume.py``) reports the extra model input a
resumed run sends against a fresh run on the same thread, in tokens: its figures come
from what the scripted model received through a real model proxy, so a proxy that
stopped putting the earlier turns first would show no extra at all."""

from __future__ import annotations

import re

import pytest

from bench import bench_resume
from tusk.issues.log_issue import LogIssue
from tusk.steps.run_claude.proxy import conversation
from tusk.steps.run_claude.proxy.prior import PriorTurns
from tusk.steps.run_claude.resume import earlier_turns


def test_a_resumed_request_carries_the_earlier_turns_over_a_fresh_one() -> None:
    body = bench_resume.fresh_body(12_000)
    fresh = bench_resume.sent_bytes(None, body)
    record = conversation.from_record(bench_resume.typical_run(1), jobid="job-1")
    assert record is not None
    issue = LogIssue(1, "", "", "closed", None, "job-1", "a/w", False, None)
    turns, _ = earlier_turns([(issue, record)], chars=60_000)
    resumed = bench_resume.sent_bytes(PriorTurns(turns, anchor=bench_resume.ANCHOR), body)
    assert resumed - fresh >= sum(len(turn.text) for turn in turns)


def test_the_report_gives_extra_tokens_per_request_for_each_count_of_earlier_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.argv", ["bench_resume.py", "--fresh-bytes", "12000"])
    bench_resume.main()
    out = capsys.readouterr().out
    assert re.search(r"fresh first request: [\d,]+ bytes ≈ [\d,]+ tokens", out)
    rows = re.findall(r"^\s+(\d+) \|.*\| +([\d,]+) B ≈ +([\d,]+) tok", out, re.M)
    assert [runs for runs, _, _ in rows] == ["1", "2", "3", "5"]
    extra = [int(tokens.replace(",", "")) for _, _, tokens in rows]
    assert extra[0] > 0 and extra == sorted(extra)  # more earlier runs, more input
