"""The conversation record a later run resumes from: built from the model proxy's record,
kept on the log issue, verified by its digest, bounded, and put before the run's own
turns by the proxy (C3). Pure."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from tusk.contracts.config import Settings
from tusk.issues.log_issue import LogIssue
from tusk.issues.thread_runs import earlier_runs, thread_of
from tusk.steps.run_claude.proxy import conversation
from tusk.steps.run_claude.proxy.conversation import ConversationRecord, Turn
from tusk.steps.run_claude.proxy.prior import PriorTurns
from tusk.steps.run_claude.resume import earlier_turns
from tusk.text.markers import job_marker

BOT = "tusk-bot"
SETTINGS = Settings(bot=BOT, control_repo="alice/control", allowed_users=("alice",))


def lines(*entries: dict[str, Any]) -> list[str]:
    return [json.dumps(entry) + "\n" for entry in entries]


def exchange(results: list[Any] = (), answer: list[Any] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    return {"type": "exchange", "results": list(results), "answer": list(answer)}


RECORD = lines(
    {"type": "task", "text": "> @tusk-bot please fix it"},
    {"type": "pass", "name": "Main session", "prompt": "You are Tusk's agent...whole context"},
    exchange(answer=[{"type": "tool_use", "name": "Bash", "input": {"command": "ls"}}]),
    exchange(
        results=[{"type": "tool_result", "content": "README.md\n" * 200}],
        answer=[{"type": "text", "text": "Fixed the typo."}],
    ),
    {"type": "pass", "name": "Self-check 2: confirm the work", "prompt": "confirm"},
    exchange(answer=[{"type": "text", "text": "Everything is pushed."}]),
)


def test_the_record_keeps_the_task_and_the_answer_not_the_self_checks() -> None:
    record = conversation.from_record(RECORD, jobid="job-1")
    assert record is not None
    assert [turn.role for turn in record.turns] == ["user", "assistant"]
    assert record.turns[0].text == "> @tusk-bot please fix it"  # the task, not the context
    answer = record.turns[1].text
    assert '[called Bash: {"command": "ls"}]' in answer and "Fixed the typo." in answer
    assert "Everything is pushed." not in answer  # Tusk's own question, not the conversation
    # A tool result is kept shortened, on one line.
    [result] = [block for block in record.turns[1].blocks if block.startswith("[result:")]
    assert len(result) <= conversation.TOOL_LINE_CHARS + len("[result: ]")


def test_a_follow_up_pass_is_a_user_turn_of_its_own() -> None:
    record = conversation.from_record(
        [
            *RECORD[:4],
            *lines(
                {"type": "pass", "name": "Follow-up", "prompt": "@tusk-bot also the docs"},
                exchange(answer=[{"type": "text", "text": "Docs done."}]),
            ),
        ],
        jobid="job-1",
    )
    assert record is not None
    assert [t.role for t in record.turns] == ["user", "assistant", "user", "assistant"]
    assert record.turns[2].text == "@tusk-bot also the docs"
    assert record.turns[3].text == "Docs done."


def test_a_run_whose_agent_never_started_has_no_record() -> None:
    assert conversation.from_record(lines({"type": "task", "text": "x"}), jobid="j") is None


def test_a_record_survives_its_comment_and_any_change_is_seen() -> None:
    record = conversation.from_record(RECORD, jobid="job-1")
    assert record is not None
    body = conversation.comment_body(record)
    assert "@tusk-bot" not in body  # packed: no mention, no markdown on the log issue
    comment = {"user": {"login": BOT}, "body": body}
    digest = record.digest()
    assert conversation.read_record([comment], jobid="job-1", bot=BOT, digest=digest) == record
    other = ConversationRecord("job-1", (Turn("user", ("x",)), Turn("assistant", ("PLANTED",))))
    forged = {"user": {"login": BOT}, "body": conversation.comment_body(other)}
    found = conversation.read_record([forged], jobid="job-1", bot=BOT, digest=digest)
    assert isinstance(found, str) and "does not match the digest" in found
    # Another login's copy is no record; a named record that is gone is missing.
    by_alice = {"user": {"login": "alice"}, "body": body}
    missing = conversation.read_record([by_alice], jobid="job-1", bot=BOT, digest=digest)
    assert missing == "its record is missing from the log issue"
    broken = {"user": {"login": BOT}, "body": body.replace("```text\n", "```text\n!!")}
    assert conversation.read_record([broken], jobid="job-1", bot=BOT, digest=digest) == (
        "its comment cannot be read"
    )
    # No digest named, no record: the run left none (it never started its agent).
    assert conversation.read_record([], jobid="job-1", bot=BOT, digest=None) is None
    unnamed = conversation.read_record([comment], jobid="job-1", bot=BOT, digest=None)
    assert unnamed.startswith("its audit chain holds no digest for its record")


def test_a_record_too_long_for_a_comment_loses_whole_blocks_never_half_of_one() -> None:
    import random

    rng = random.Random(7)
    noise = ["".join(rng.choice("abcdefghij0123456789") for _ in range(3000)) for _ in range(60)]
    record = ConversationRecord("j", (Turn("user", ("task",)), Turn("assistant", tuple(noise))))
    fitted = conversation.fitted(record, room=20_000)
    assert len(conversation.encode(fitted)) <= 20_000
    kept = fitted.turns[1].blocks
    assert kept[0] == conversation.LEFT_OUT
    assert all(block in noise for block in kept[1:]) and kept[-1] == noise[-1]


def log_item(number: int, title: str, jobid: str, *, author: str = BOT, **extra: Any) -> dict:
    return {
        "number": number,
        "title": title,
        "body": f"# Task\n\n{job_marker(jobid)}",
        "user": {"login": author},
        "state": "closed",
        "created_at": "2026-01-01T00:00:00Z",
        **extra,
    }


def test_earlier_runs_on_a_thread_are_the_bots_log_issues_below_this_one() -> None:
    items = [
        log_item(9, "[Agent Log] alice/widgets #1 — 2026-01-02 00:00", "job-later"),
        log_item(7, "[Agent Log] alice/widgets #1 — 2026-01-01 00:00", "job-b"),
        log_item(6, "[Agent Log] alice/widgets #12 — 2026-01-01 00:00", "job-other-thread"),
        log_item(5, "[Agent Log] alice/other #1 — 2026-01-01 00:00", "job-other-repo"),
        log_item(4, "[Agent Log] alice/widgets #1 — 2026-01-01 00:00", "job-typed", author="alice"),
        log_item(3, "[Agent Log] alice/widgets #1 — x", "job-dup", state_reason="duplicate"),
        log_item(2, "[Agent Log] Alice/Widgets #1 — 2026-01-01 00:00", "job-a"),
    ]
    found = earlier_runs(items, SETTINGS, repo="alice/widgets", number=1, before=9)
    assert [issue.number for issue in found] == [2, 7]
    assert thread_of(items[0]) == ("alice/widgets", 1)
    assert thread_of({"title": "[Agent Log] alice/widgets — 2026"}) is None


def issue(number: int) -> LogIssue:
    return LogIssue(
        number, "", "", "closed", None, f"job-{number}", "a/w", False, datetime.now(UTC)
    )


def record_of(number: int, size: int) -> ConversationRecord:
    return ConversationRecord(
        f"job-{number}", (Turn("user", (f"task {number}",)), Turn("assistant", ("x" * size,)))
    )


def test_older_runs_are_left_out_whole_to_stay_within_the_bound() -> None:
    records = [(issue(n), record_of(n, 1000)) for n in (1, 2, 3)]
    turns, left_out = earlier_turns(records, chars=2500)
    assert left_out == 1
    assert [t.role for t in turns] == ["user", "assistant", "user", "assistant"]
    assert "the run of log issue #2" in turns[0].text and "task 2" in turns[0].text
    assert turns[3].text == "x" * 1000  # never cut in the middle
    assert earlier_turns(records, chars=100) == ((), 3)


def request(*messages: dict[str, Any]) -> bytes:
    return json.dumps({"model": "m", "max_tokens": 10, "messages": list(messages)}).encode()


PRIOR = PriorTurns(
    (Turn("user", ("earlier task",)), Turn("assistant", ("earlier answer",))),
    anchor="You are Tusk's agent.",
)


def test_the_proxy_puts_the_earlier_turns_before_the_runs_own_conversation_only() -> None:
    own = {"role": "user", "content": [{"type": "text", "text": "You are Tusk's agent. Task"}]}
    sent = json.loads(PRIOR.apply(request(own, {"role": "assistant", "content": "ok"})))
    assert [m["role"] for m in sent["messages"]] == ["user", "assistant", "user", "assistant"]
    assert sent["messages"][0]["content"][0]["text"] == "earlier task"
    assert sent["messages"][2] == own and sent["max_tokens"] == 10
    # Claude Code's side requests (a title, a quota check) go as they came.
    side = request({"role": "user", "content": "quota"})
    assert PRIOR.apply(side) == side
    assert PRIOR.apply(b"not json") == b"not json"
    assert PriorTurns((), anchor="You are").apply(request(own)) == request(own)
