"""The audit log kept on the log issue: posted in collapsed parts under GitHub's
body limit, and verified from the issue alone; edits, removals and lost parts
are caught."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tusk.audit.chain import AuditLog, read_records
from tusk.audit.on_issue import BODY_LIMIT, audit_comments, utf16_len, verify_comments
from tusk.cli.main import main as tusk_main


def audit_file(tmp_path: Path, count: int, *, reason_chars: int = 40) -> tuple[str, list[Any]]:
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path)
    for i in range(count):
        log.append(
            tool="create_comment",
            kind="write",
            target="alice/widgets#1",
            args={"body": f"comment {i}"},
            decision="refused" if i % 2 else "allowed",
            code="LIMIT_EXCEEDED" if i % 2 else None,
            # Text GitHub would render or split on, kept byte for byte.
            reason=("é\u2028@alice #12 `x` </details> " * reason_chars)[: reason_chars * 5],
            url=None if i % 2 else f"https://github.com/alice/widgets/issues/1#c{i}",
            created=None if i % 2 else "comment",
        )
    log.close()
    return path.read_text(encoding="utf-8"), read_records(path)


def posted(text: str, records: list[Any], *, limit: int = BODY_LIMIT) -> list[dict[str, Any]]:
    bodies = audit_comments(
        text,
        jobid="alice-widgets-ic-1",
        run="1001-1",
        records=len(records),
        head=records[-1].hash if records else "",
        log_url="https://github.com/alice/control/issues/7",
        limit=limit,
    )
    return [{"body": body, "created_at": "t0", "updated_at": "t0"} for body in bodies]


def test_a_small_log_is_one_collapsed_comment_and_verifies(tmp_path: Path) -> None:
    text, records = audit_file(tmp_path, 5)
    comments = posted(text, records)
    assert len(comments) == 1
    body = comments[0]["body"]
    assert body.startswith("<!-- tusk:audit ")
    assert "<details><summary>audit.jsonl: records 1–5 of 5</summary>" in body
    assert "tusk audit verify https://github.com/alice/control/issues/7" in body
    found, verdict = verify_comments(comments)
    assert verdict.ok and verdict.records == 5 and verdict.head == records[-1].hash
    assert found is not None and found.parts == 1


def test_a_long_log_is_split_under_the_body_limit_and_joins_exactly(tmp_path: Path) -> None:
    text, records = audit_file(tmp_path, 60, reason_chars=400)  # ~2 KB per record
    comments = posted(text, records, limit=20_000)
    assert len(comments) > 3
    assert all(utf16_len(c["body"]) <= 20_000 for c in comments)
    verdict = verify_comments(comments)[1]
    assert verdict.ok, verdict.message
    assert verdict.records == 60


def test_a_record_longer_than_a_comment_is_cut_and_rejoined(tmp_path: Path) -> None:
    text, records = audit_file(tmp_path, 3, reason_chars=2_000)  # ~10 KB records
    comments = posted(text, records, limit=4_000)
    assert len(comments) > 6
    assert verify_comments(comments)[1].ok


def test_an_edited_record_breaks_the_chain_at_that_record(tmp_path: Path) -> None:
    text, records = audit_file(tmp_path, 6)
    comments = posted(text, records)
    comments[0]["body"] = comments[0]["body"].replace(
        '"decision":"refused"', '"decision":"allowed"', 1
    )
    comments[0]["updated_at"] = "t1"
    found, verdict = verify_comments(comments)
    assert not verdict.ok
    assert verdict.message.startswith("chain broken at record 2: ")
    assert found is not None and found.edited == (1,)


def test_removing_the_last_records_is_caught_by_the_announced_head(tmp_path: Path) -> None:
    text, records = audit_file(tmp_path, 6)
    comments = posted(text, records)
    last = text.split("\n")[-2] + "\n"  # records may hold U+2028: split on newlines only
    comments[0]["body"] = comments[0]["body"].replace(last, "")
    verdict = verify_comments(comments)[1]
    assert not verdict.ok
    assert "records removed from the end" in verdict.message


def test_a_lost_part_and_no_audit_at_all_are_said(tmp_path: Path) -> None:
    text, records = audit_file(tmp_path, 60, reason_chars=400)
    comments = posted(text, records, limit=20_000)
    assert verify_comments(comments[:1] + comments[2:])[1].message == "audit part(s) 2 missing"
    assert verify_comments([{"body": "hello"}])[1].message == "no audit log on this issue"


def test_the_latest_complete_run_is_the_one_verified(tmp_path: Path) -> None:
    text, records = audit_file(tmp_path, 4)
    first = posted(text, records)
    second = [{**c, "body": c["body"].replace('"run":"1001-1"', '"run":"1001-2"')} for c in first]
    found, verdict = verify_comments(first + second)
    assert verdict.ok and found is not None and found.run == "1001-2"


def test_verify_reads_the_log_issue_from_github(
    local_github: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    local_github.load(
        {
            "users": [{"login": "alice"}, {"login": "tusk-bot"}],
            "tokens": {
                "agent": {"user": "tusk-bot", "scopes": ["repo"]},
                "read": {"user": "tusk-bot", "scopes": ["repo"], "read_only": True},
            },
            "repos": [
                {
                    "name": "alice/control",
                    "private": True,
                    "collaborators": {"tusk-bot": "write"},
                    "issues": [{"number": 7, "author": "tusk-bot", "title": "[Agent Log] x"}],
                }
            ],
        }
    )
    text, records = audit_file(tmp_path, 30, reason_chars=400)
    writer = local_github.gateway("agent")
    for comment in posted(text, records, limit=30_000):
        writer.post("/repos/alice/control/issues/7/comments", json={"body": comment["body"]})
    url = writer.get("/repos/alice/control/issues/7")["html_url"]
    monkeypatch.setenv("TUSK_GITHUB_API_URL", local_github.url)
    monkeypatch.setenv("TUSK_READ_TOKEN", "read")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)

    assert tusk_main(["audit", "verify", url]) == 0
    out = capsys.readouterr().out
    assert f"{url}: audit of job alice-widgets-ic-1 (run 1001-1): 30 record(s) in" in out
    assert f"chain intact, head {records[-1].hash}" in out

    comments = writer.get("/repos/alice/control/issues/7/comments")
    edited = comments[1]["body"].replace("LIMIT_EXCEEDED", "LIMIT_EXCEEDEE", 1)
    writer.patch(f"/repos/alice/control/issues/comments/{comments[1]['id']}", json={"body": edited})
    assert tusk_main(["audit", "verify", url]) == 1
    err = capsys.readouterr().err
    assert "chain broken at record" in err
    assert "audit part(s) 2 were edited after posting" in err

    # Without a token the private repository's issue reads as not found: said as such.
    monkeypatch.delenv("TUSK_READ_TOKEN")
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    assert tusk_main(["audit", "verify", url]) == 1
    assert "no token was sent (TUSK_READ_TOKEN is not set)" in capsys.readouterr().err
