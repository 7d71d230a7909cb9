"""The write-up's own parts for people: the audit records on the log issue
(verifiable from there alone), the run's facts in the summary, and 🚀 or 😕 on
the mention; each once, however often the write-up is redone."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from test_writeup_github import CONTROL, JOBID, LOOP, OK, parts_on_the_issue, run_dir, scenario

from tusk.audit.chain import conversation_digest
from tusk.audit.on_issue import chain_records, verify_comments
from tusk.contracts.models import Trigger
from tusk.issues.run_facts import RunFacts
from tusk.steps.run_claude.proxy.exchanges import RECORD_FILE
from tusk.steps.run_claude.writeup import publish as writeup
from tusk.text.markers import first_marker

BOT = "tusk-bot"


@pytest.fixture
def gh(local_github: Any) -> Any:
    world = scenario()
    world["repos"][0]["issues"] = [
        {
            "number": 1,
            "author": "alice",
            "title": "Fix it",
            "body": "broken",
            "comments": [{"author": "alice", "body": "@tusk-bot fix it"}],
        }
    ]
    local_github.load(world)
    return local_github


def with_trigger(gh: Any, folder: Path) -> Path:
    comment = gh.gateway("alice").get("/repos/alice/widgets/issues/1/comments")[0]
    state = writeup.load_state(folder)
    assert state is not None
    state.trigger = Trigger(
        type="issue_comment",
        id=str(comment["id"]),
        url=comment["html_url"],
        number=1,
        author="alice",
        body=comment["body"],
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    state.facts = RunFacts(
        requester="alice",
        trust_level="owner",
        trust_source="owns the repository",
        permissions=("allowed writes: comment",),
        marker="[permissions: comment-on-this-issue]",
        budget="60 turns, 30 minutes, $5.00 of model spend",
        network="fenced (17 hosts allowed)",
    )
    writeup.save_state(folder, state)
    return folder


def reactions(gh: Any) -> list[tuple[str, str]]:
    comment = gh.gateway("alice").get("/repos/alice/widgets/issues/1/comments")[0]
    found = gh.gateway("alice").get(
        f"/repos/alice/widgets/issues/comments/{comment['id']}/reactions"
    )
    return [(r["user"]["login"], r["content"]) for r in found]


def log_comments(gh: Any) -> list[dict[str, Any]]:
    return gh.gateway("alice").get(f"/repos/{CONTROL}/issues/1/comments")


def test_a_completed_run_posts_its_audit_shows_its_facts_and_gets_a_rocket(
    gh: Any, tmp_path: Path
) -> None:
    folder = with_trigger(gh, run_dir(tmp_path, gh, OK))
    for _ in range(2):  # the clean-up step may redo the write-up: nothing doubles
        _, report = writeup.write_up(folder, gh.gateway("agent"))
        assert report.complete
    assert parts_on_the_issue(gh) == ["summary-1", "transcript-1", "audit-1"]
    assert reactions(gh) == [(BOT, "rocket")]
    found, verdict = verify_comments(log_comments(gh))
    assert verdict.ok and verdict.records == 1
    assert found is not None and found.jobid == JOBID and found.run == "n1"
    summary = log_comments(gh)[0]["body"]
    assert "- **requested by** `alice`, trust **owner** (owns the repository)" in summary
    assert "- **permission marker**: `[permissions: comment-on-this-issue]`" in summary
    assert "- **budget**: 60 turns, 30 minutes, $5.00 of model spend" in summary
    assert f"`tusk audit verify {gh.url}/{CONTROL}/issues/1`" in summary
    lines = report.lines()
    assert "write-up part reaction: done (rocket)" in lines


def test_a_failed_run_gets_a_confused_face(gh: Any, tmp_path: Path) -> None:
    folder = with_trigger(gh, run_dir(tmp_path, gh, LOOP))
    _, report = writeup.write_up(folder, gh.gateway("agent"))
    assert report.complete
    assert reactions(gh) == [(BOT, "confused")]
    assert parts_on_the_issue(gh) == ["summary-1", "transcript-1", "audit-1", "error"]


def test_a_reaction_github_refuses_leaves_the_write_up_whole(gh: Any, tmp_path: Path) -> None:
    folder = with_trigger(gh, run_dir(tmp_path, gh, OK))
    gh.add_fault("POST", r"/reactions$", status=403, count=None)
    state, report = writeup.write_up(folder, gh.gateway("agent"))
    assert report.complete and state.complete
    assert "write-up part reaction: done (rocket could not be added)" in report.lines()
    assert gh.gateway("alice").get(f"/repos/{CONTROL}/issues/1")["state"] == "closed"


def test_audit_records_holding_a_secret_are_withheld_not_redacted(gh: Any, tmp_path: Path) -> None:
    folder = run_dir(tmp_path, gh, OK)
    with (folder / writeup.AUDIT_FILE).open("a") as handle:
        handle.write('{"reason": "ghp_secretsecretsecret"}\n')
    writeup.write_up(folder, gh.gateway("agent"), secrets=["ghp_secretsecretsecret"])
    bodies = [c["body"] for c in log_comments(gh)]
    assert not any("ghp_secretsecretsecret" in body for body in bodies)
    assert any("The audit records are not posted here" in body for body in bodies)


def test_the_audit_covers_the_transcript_so_a_changed_transcript_fails_to_verify(
    gh: Any, tmp_path: Path
) -> None:
    """The audit's markers name the digest of the run's transcript comments: whoever
    edits the transcript afterwards (anyone with write access may edit any comment)
    breaks `tusk audit verify` as surely as an edited audit record does."""
    folder = with_trigger(gh, run_dir(tmp_path, gh, OK))
    _, report = writeup.write_up(folder, gh.gateway("agent"))
    assert report.complete
    comments = log_comments(gh)
    _, verdict = verify_comments(comments)
    assert verdict.ok, verdict.message
    (transcript,) = [c for c in comments if "transcript-1" in c["body"].split("\n", 1)[0]]
    edited = transcript["body"].replace("step 0", "step 0, and every test passed")
    assert edited != transcript["body"]
    gh.gateway("agent").patch(
        f"/repos/{CONTROL}/issues/comments/{transcript['id']}", json={"body": edited}
    )
    _, verdict = verify_comments(log_comments(gh))
    assert not verdict.ok and "transcript on this issue is not the one" in verdict.message
    # A transcript comment taken away is found the same way.
    gh.gateway("agent").delete(f"/repos/{CONTROL}/issues/comments/{transcript['id']}")
    _, verdict = verify_comments(log_comments(gh))
    assert not verdict.ok and "transcript" in verdict.message


def test_the_conversation_record_s_digest_is_sealed_into_the_posted_chain(
    gh: Any, tmp_path: Path
) -> None:
    """A run whose main session started keeps its conversation record: the chain posted
    on the log issue ends with a line holding the record's digest (the run folder's
    audit.jsonl is left as the MCP server wrote it), a write-up done again posts
    nothing twice, and an edited record comment fails `tusk audit verify`."""
    folder = with_trigger(gh, run_dir(tmp_path, gh, OK))
    record = folder / RECORD_FILE
    record.write_text(
        json.dumps({"type": "task", "text": "> @tusk-bot fix it"})
        + "\n"
        + json.dumps({"type": "pass", "name": "Main session", "prompt": "p"})
        + "\n"
        + record.read_text()
    )
    on_disk = (folder / writeup.AUDIT_FILE).read_text()
    for _ in range(2):
        _, report = writeup.write_up(folder, gh.gateway("agent"))
        assert report.complete
    assert (folder / writeup.AUDIT_FILE).read_text() == on_disk
    assert parts_on_the_issue(gh) == ["summary-1", "transcript-1", "conversation", "audit-1"]
    comments = log_comments(gh)
    found, verdict = verify_comments(comments)
    assert verdict.ok and verdict.records == 2, verdict.message
    assert found is not None
    [kept] = [c for c in comments if first_marker(c["body"], "conversation")]
    digest = first_marker(kept["body"], "conversation")["digest"]
    assert conversation_digest(chain_records(found)) == digest == found.conversation
    edited = kept["body"].replace("```text\n", "```text\nH4sI", 1)
    gh.gateway("agent").patch(
        f"/repos/{CONTROL}/issues/comments/{kept['id']}", json={"body": edited}
    )
    _, verdict = verify_comments(log_comments(gh))
    assert not verdict.ok and "conversation record" in verdict.message
