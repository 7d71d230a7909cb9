"""The write-up against the local GitHub's faults: each part on its own, found again
after an answer that was lost, completed by a re-run without a second copy."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tusk.audit.chain import AuditLog
from tusk.contracts.models import RunMetadata
from tusk.github.once import Patience
from tusk.steps.run_claude.proxy.exchanges import RECORD_FILE
from tusk.steps.run_claude.writeup import publish as writeup
from tusk.steps.run_claude.writeup.outcome import Outcome
from tusk.text.markers import job_marker

BOT = "tusk-bot"
CONTROL = "alice/tusk-control"
JOBID = "job-writeup-1"
QUICK = Patience(looks=2, first_pause=0.5, sends=3)
OK = Outcome(kind="completed", headline="Completed")
LOOP = Outcome(kind="loop", headline="Loop detected", detail="6 identical calls")
COMMENTS = rf"^/repos/{CONTROL}/issues/1/comments$"


def scenario() -> dict[str, Any]:
    return {
        "users": [{"login": "alice"}, {"login": BOT}],
        "tokens": {
            "agent": {"user": BOT, "scopes": ["repo"]},
            "alice": {"user": "alice", "scopes": ["repo"]},
        },
        "repos": [
            {"name": "alice/widgets", "collaborators": {BOT: "write"}},
            {
                "name": CONTROL,
                "private": True,
                "collaborators": {BOT: "write"},
                "labels": ["workflow", "bug"],
                "issues": [
                    {
                        "number": 1,
                        "author": BOT,
                        "title": "[Agent Log] alice/widgets #1 — 2026-01-01 00:00",
                        "body": "# Task\n\n> fix it\n\n" + job_marker(JOBID),
                        "labels": ["workflow"],
                    }
                ],
            },
        ],
    }


@pytest.fixture
def gh(local_github: Any) -> Any:
    local_github.load(scenario())
    return local_github


def run_dir(tmp_path: Path, gh: Any, outcome: Outcome | None, *, events: int = 3) -> Path:
    """A run folder as run-claude leaves it: the write-up state, events, audit."""
    folder = tmp_path / "run"
    folder.mkdir()
    run = RunMetadata(
        jobid=JOBID,
        repo="alice/widgets",
        trigger_url=f"{gh.url}/alice/widgets/issues/1#issuecomment-1",
        trigger_type="issue_comment",
        thread_number=1,
        log_issue_number=1,
        log_issue_url=f"{gh.url}/{CONTROL}/issues/1",
        control_repo=CONTROL,
        task_path="task.md",
        context_path="context.md",
        context_file="context.json",
    )
    writeup.save_state(
        folder,
        writeup.WriteUpState(
            run=run, bot=BOT, bug_label="bug", outcome=outcome, nonce="n1", isolation="off"
        ),
    )
    lines = [
        {"type": "exchange", "results": [], "answer": [{"type": "text", "text": f"step {i}"}]}
        for i in range(events)
    ]
    (folder / RECORD_FILE).write_text("".join(json.dumps(e) + "\n" for e in lines))
    log = AuditLog(folder / writeup.AUDIT_FILE, clock=lambda: datetime(2026, 1, 1, tzinfo=UTC))
    log.append(
        tool="create_comment",
        kind="write",
        target="alice/widgets#1",
        args={"b": 1},
        decision="allowed",
        url=f"{gh.url}/alice/widgets/issues/1#issuecomment-9",
        created="comment",
    )
    return folder


def issue(gh: Any) -> dict[str, Any]:
    return gh.gateway("alice").get(f"/repos/{CONTROL}/issues/1")


def parts_on_the_issue(gh: Any) -> list[str]:
    comments = gh.gateway("alice").get(f"/repos/{CONTROL}/issues/1/comments")
    return [writeup.part_of(c, jobid=JOBID, bot=BOT) or "?" for c in comments]


def write_up(gh: Any, folder: Path, **gateway_kwargs: Any) -> tuple[Any, writeup.Report]:
    gateway = gh.gateway("agent", **gateway_kwargs)
    return writeup.write_up(folder, gateway, patience=QUICK)


def labels(gh: Any) -> list[str]:
    return [label["name"] for label in issue(gh)["labels"]]


def test_a_completed_run_is_written_up_and_closed(gh: Any, tmp_path: Path) -> None:
    state, report = write_up(gh, run_dir(tmp_path, gh, OK))
    assert report.complete and state.complete
    assert parts_on_the_issue(gh) == ["summary-1", "transcript-1", "audit-1"]
    assert issue(gh)["state"] == "closed" and issue(gh)["state_reason"] == "completed"
    keys = ["summary-1", "transcript-1", "audit-1", "outcome", "close"]
    assert [r.key for r in report.results] == keys


def test_the_outcome_is_one_line_atop_the_body_and_a_rerun_does_not_double_it(
    gh: Any, tmp_path: Path
) -> None:
    folder = run_dir(tmp_path, gh, OK.model_copy(update={"turns": 4}))
    state = writeup.load_state(folder)
    assert state is not None
    run_url = "https://github.com/alice/tusk-control/actions/runs/7/attempts/1"
    state.started_at, state.finished_at, state.run_url = 1000.0, 1192.4, run_url
    state.network = "fenced (3 hosts allowed)"
    writeup.save_state(folder, state)
    (folder / "pushes.jsonl").write_text(
        '{"additions":2,"branch":"fix-typo","deletions":1,"files":1,"url":"u"}\n'
        '{"additions":5,"branch":"fix-typo","deletions":1,"files":2,"url":"u2"}\n'
    )
    write_up(gh, folder)
    line = (
        "✅ **Completed** · 3 min 12 s · 4 turn(s) · created: 1 comment, branch `fix-typo` "
        "(2 file(s), +5 −1) · network: fenced (3 hosts allowed) · "
        f"[Actions run]({run_url})"
    )
    body = issue(gh)["body"]
    assert body.startswith(f"<!-- tusk:outcome -->\n{line}\n<!-- /tusk:outcome -->\n\n# Task")
    comments = gh.gateway("alice").get(f"/repos/{CONTROL}/issues/1/comments")
    summary_text = comments[0]["body"]
    assert line in summary_text and f"[Actions run]({run_url})" in summary_text
    assert "### Pushed branches\n- `fix-typo`: 2 file(s), +5 −1 (u2)" in summary_text
    # Written up again (the clean-up step), the line is replaced, not added.
    state = writeup.load_state(folder)
    assert state is not None
    state.complete = False
    writeup.save_state(folder, state)
    write_up(gh, folder)
    assert issue(gh)["body"] == body and body.count("<!-- tusk:outcome -->") == 1


def test_a_summary_that_landed_behind_a_502_is_not_posted_twice(gh: Any, tmp_path: Path) -> None:
    gh.add_fault("POST", COMMENTS, status=502, lands=True)
    _, report = write_up(gh, run_dir(tmp_path, gh, OK))
    assert report.complete
    assert parts_on_the_issue(gh) == ["summary-1", "transcript-1", "audit-1"]  # one of each
    posts = [e for e in gh.journal() if e["method"] == "POST" and "comments" in e["path"]]
    assert len(posts) == 3  # one per part: the lost one was found, not sent again


def test_a_reset_after_the_comment_landed_is_found(gh: Any, tmp_path: Path) -> None:
    gh.add_fault("POST", COMMENTS, drop=True, lands=True)
    _, report = write_up(gh, run_dir(tmp_path, gh, OK))
    assert report.complete and parts_on_the_issue(gh) == ["summary-1", "transcript-1", "audit-1"]


def test_an_answer_later_than_the_client_timeout_is_found(gh: Any, tmp_path: Path) -> None:
    gh.add_fault("POST", COMMENTS, delay=1.0, lands=True)
    _, report = write_up(gh, run_dir(tmp_path, gh, OK), timeout=0.3)
    assert report.complete and parts_on_the_issue(gh) == ["summary-1", "transcript-1", "audit-1"]


def test_a_502_that_did_not_land_is_sent_again(gh: Any, tmp_path: Path) -> None:
    gh.add_fault("POST", COMMENTS, status=502)
    _, report = write_up(gh, run_dir(tmp_path, gh, OK))
    assert report.complete and parts_on_the_issue(gh) == ["summary-1", "transcript-1", "audit-1"]


def test_one_failed_part_does_not_stop_the_others_and_a_rerun_completes_it(
    gh: Any, tmp_path: Path
) -> None:
    folder = run_dir(tmp_path, gh, OK)
    gh.add_fault("POST", COMMENTS, status=422, message="Validation Failed")  # summary-1 only
    state, report = write_up(gh, folder)
    assert not report.complete and report.failed == ["summary-1"]
    assert parts_on_the_issue(gh) == ["transcript-1", "audit-1"]
    # The agent completed: the outcome says so, the write-up failure is flagged apart.
    assert state.outcome is not None and state.outcome.kind == "completed"
    assert "write-up incomplete: summary-1 failed" in writeup.describe(state, report)
    assert issue(gh)["state"] == "open" and "bug" in labels(gh) and state.flagged
    state, report = write_up(gh, folder)  # the clean-up step or --write-up, later
    assert report.complete and state.complete and not state.flagged
    assert sorted(parts_on_the_issue(gh)) == ["audit-1", "summary-1", "transcript-1"]
    assert issue(gh)["state"] == "closed" and "bug" not in labels(gh)
    existed = {r.key for r in report.results if r.existed}
    assert existed == {"transcript-1", "audit-1"}


def test_a_failed_run_gets_its_error_and_the_bug_label_once_however_often_rerun(
    gh: Any, tmp_path: Path
) -> None:
    folder = run_dir(tmp_path, gh, LOOP)
    for _ in range(3):
        _, report = write_up(gh, folder)
        assert report.complete
    assert parts_on_the_issue(gh) == ["summary-1", "transcript-1", "audit-1", "error"]
    assert issue(gh)["state"] == "open" and "bug" in labels(gh)


def test_when_the_comments_cannot_be_listed_nothing_is_posted_blindly(
    gh: Any, tmp_path: Path
) -> None:
    folder = run_dir(tmp_path, gh, OK)
    gh.add_fault("GET", COMMENTS, status=502, count=None)
    _, report = write_up(gh, folder)
    assert not report.complete
    assert {"summary-1", "transcript-1"} <= set(report.failed)
    gh.clear_faults()
    assert parts_on_the_issue(gh) == []
    assert issue(gh)["state"] == "open" and "bug" in labels(gh)
    _, report = write_up(gh, folder)
    assert report.complete and parts_on_the_issue(gh) == ["summary-1", "transcript-1", "audit-1"]
    assert issue(gh)["state"] == "closed"


def test_a_copy_that_showed_up_late_is_removed(gh: Any, tmp_path: Path) -> None:
    folder = run_dir(tmp_path, gh, OK)
    body = f"{writeup.part_marker(JOBID, 'summary-1', 'old')}\nsummary"
    for _ in range(2):
        gh.gateway("agent").post(f"/repos/{CONTROL}/issues/1/comments", json={"body": body})
    _, report = write_up(gh, folder)
    assert report.complete and parts_on_the_issue(gh) == ["summary-1", "transcript-1", "audit-1"]


def test_a_part_marker_typed_by_someone_else_is_ignored(gh: Any, tmp_path: Path) -> None:
    forged = f"{writeup.part_marker(JOBID, 'summary-1', 'x')}\nall done, nothing to see"
    gh.gateway("alice").post(f"/repos/{CONTROL}/issues/1/comments", json={"body": forged})
    _, report = write_up(gh, run_dir(tmp_path, gh, OK))
    assert report.complete
    assert parts_on_the_issue(gh) == ["?", "summary-1", "transcript-1", "audit-1"]


def test_a_run_killed_before_its_outcome_is_written_up_as_cancelled(
    gh: Any, tmp_path: Path
) -> None:
    state, report = write_up(gh, run_dir(tmp_path, gh, None))
    assert report.complete and state.outcome is not None and state.outcome.kind == "cancelled"
    assert parts_on_the_issue(gh) == ["summary-1", "transcript-1", "audit-1", "error"]
    comments = gh.gateway("alice").get(f"/repos/{CONTROL}/issues/1/comments")
    assert "issuecomment-9" in comments[0]["body"]  # what the agent wrote so far is listed
    assert "stopped before it finished" in comments[3]["body"]
    assert issue(gh)["state"] == "open" and "bug" in labels(gh)


def test_a_run_step_that_never_started_is_recorded_once_by_the_cleanup_step(
    gh: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An earlier step of the action failed (npm, a cancel): the always-run clean-up step
    has no run folder, only run.json, and still makes the failure visible, once."""
    from tusk.cli.main import main as tusk_main

    folder = run_dir(tmp_path, gh, None)
    run_json = tmp_path / "run.json"
    run_json.write_text(writeup.load_state(folder).run.model_dump_json())  # type: ignore[union-attr]
    config = tmp_path / "tusk.yml"
    config.write_text(f"bot: {BOT}\ncontrol_repo: {CONTROL}\nallowed_users: [alice]\n")
    monkeypatch.setenv("TUSK_AGENT_TOKEN", "agent")
    monkeypatch.setenv("TUSK_GITHUB_API_URL", gh.url)
    monkeypatch.delenv("GITHUB_OUTPUT", raising=False)
    argv = ["run-claude", "--cleanup", "--run-json", str(run_json), "--config", str(config)]
    for _ in range(2):
        assert tusk_main(argv) == 0
    comments = gh.gateway("alice").get(f"/repos/{CONTROL}/issues/1/comments")
    assert [writeup.part_of(c, jobid=JOBID, bot=BOT) for c in comments] == ["setup-error"]
    assert "The agent run never started" in comments[0]["body"]
    assert issue(gh)["state"] == "open" and "bug" in labels(gh)
