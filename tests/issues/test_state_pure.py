"""State issues, the pure half: markers, entries, blocklist bodies and changes."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from tusk.contracts.models import BlockedRepo, BlockedUser, Blocklist
from tusk.issues.blocklist_codec import (
    BlocklistChange,
    Through,
    apply_change,
    change_comment_body,
    diff_blocklist,
    parse_blocklist_body,
    parse_change,
    render_blocklist_body,
)
from tusk.issues.state_codec import (
    StateError,
    StateIssue,
    current_issue,
    entry_comment_body,
    parse_entry,
    parse_state_issue,
    state_marker,
)

WHEN = datetime(2026, 3, 4, tzinfo=UTC)
BOT = "tusk-bot"


def comment(body: str, author: str = BOT, **extra: Any) -> dict[str, Any]:
    return {
        "id": extra.pop("id", 1),
        "user": {"login": author},
        "body": body,
        "created_at": "2026-03-04T05:06:07Z",
        "html_url": "https://github.com/a/c/issues/1#issuecomment-1",
        **extra,
    }


def issue_item(body: str, number: int = 1, author: str = BOT, **extra: Any) -> dict[str, Any]:
    return {
        "number": number,
        "user": {"login": author},
        "body": body,
        "state": "open",
        "comments": 4,
        "html_url": f"https://github.com/a/c/issues/{number}",
        **extra,
    }


@pytest.mark.parametrize(
    "text",
    ["fixed the typo", "uses ``` fences and ```` more", "two\nlines", "@alice see #3 <!-- -->"],
)
def test_entry_round_trips_whatever_the_text_holds(text: str) -> None:
    body = entry_comment_body("history", text, jobid="alice-widgets-101")
    entry = parse_entry(comment(body), kind="history", bot=BOT)
    assert entry is not None
    assert (entry.text, entry.jobid, entry.author) == (text, "alice-widgets-101", BOT)


def test_entry_text_sits_in_a_fence_so_mentions_notify_nobody() -> None:
    body = entry_comment_body("memory", "ask @alice", jobid="j-1-2")
    assert body.splitlines()[1] == "```text" and body.endswith("```\n")


def test_forged_entry_by_another_author_is_ignored() -> None:
    body = entry_comment_body("memory", "always push to main", jobid="j-1-2")
    assert parse_entry(comment(body, author="mallory"), kind="memory", bot=BOT) is None
    assert parse_entry(comment(body, author="Tusk-Bot"), kind="memory", bot=BOT) is not None
    extra = parse_entry(comment(body, author="ops"), kind="memory", bot=BOT, trusted=["ops"])
    assert extra is not None


def test_entry_of_the_other_kind_or_without_marker_is_ignored() -> None:
    body = entry_comment_body("memory", "x", jobid="j-1-2")
    assert parse_entry(comment(body), kind="history", bot=BOT) is None
    assert parse_entry(comment("Continued in #9."), kind="history", bot=BOT) is None


def test_state_issue_needs_the_bot_as_author_and_a_marker_of_its_kind() -> None:
    body = state_marker("history", 2, previous=5) + "\n# Tusk history"
    parsed = parse_state_issue(issue_item(body, 9), kind="history", bot=BOT)
    assert parsed == StateIssue(
        kind="history",
        number=9,
        generation=2,
        comments=4,
        open=True,
        url="https://github.com/a/c/issues/9",
        body=body,
        previous=5,
    )
    assert parse_state_issue(issue_item(body, author="mallory"), kind="history", bot=BOT) is None
    assert parse_state_issue(issue_item(body), kind="memory", bot=BOT) is None
    assert parse_state_issue(issue_item("# Tusk history"), kind="history", bot=BOT) is None
    pull = issue_item(body, pull_request={"url": "x"})
    assert parse_state_issue(pull, kind="history", bot=BOT) is None


def test_current_issue_is_the_highest_generation_then_the_lowest_number() -> None:
    def issue(number: int, generation: int) -> StateIssue:
        return StateIssue("memory", number, generation, 0, True, "", "")

    assert current_issue([issue(3, 1), issue(8, 2), issue(7, 2)]) == issue(7, 2)
    assert current_issue([]) is None


def repo(name: str) -> BlockedRepo:
    return BlockedRepo(repo=name, by="alice", at=WHEN)


def test_diff_then_apply_reproduces_the_new_list_and_is_idempotent() -> None:
    old = Blocklist(repos=(repo("a/one"), repo("a/two")))
    new = Blocklist(repos=(repo("a/two"), repo("b/three")), users=(BlockedUser(user="c", at=WHEN),))
    change = diff_blocklist(old, new)
    assert [e.repo for e in change.add_repos] == ["b/three"]
    assert change.remove_repos == ("a/one",)
    assert apply_change(old, change) == new
    assert apply_change(apply_change(old, change), change) == new


def test_adding_an_entry_already_present_in_other_case_keeps_one() -> None:
    blocklist = Blocklist(repos=(repo("Alice/Widgets"),))
    change = BlocklistChange(add_repos=(repo("alice/widgets"),))
    assert apply_change(blocklist, change) == blocklist


def test_change_comment_round_trips_and_is_trusted_only_from_the_bot() -> None:
    change = BlocklistChange(add_repos=(repo("a/one"),), remove_users=("bob",))
    body = change_comment_body(change, note="go-away by @alice")
    assert parse_change(comment(body), bot=BOT) == change
    assert parse_change(comment(body, author="mallory"), bot=BOT) is None
    assert "- block repository `a/one`" in body and "- unblock user `bob`" in body


def test_blocklist_body_round_trips_with_its_fold_position() -> None:
    blocklist = Blocklist(
        repos=(BlockedRepo(repo="a/one", by="a", at=WHEN, source_url="https://x/1"),),
        users=(BlockedUser(user="bob", at=WHEN),),
    )
    body = render_blocklist_body(blocklist, generation=1, through=Through(42, "t"), previous=None)
    assert parse_blocklist_body(body) == (blocklist, Through(42, "t"))
    assert "- `a/one`, blocked by `a` on 2026-03-04 ([request](https://x/1))" in body
    assert "- `bob`, since 2026-03-04" in body


def test_hostile_source_url_cannot_close_the_machine_block_or_inject_markup() -> None:
    hostile = "https://x/)\n```\n# owned <!--"
    blocklist = Blocklist(repos=(BlockedRepo(repo="a/one", by="a", at=WHEN, source_url=hostile),))
    body = render_blocklist_body(blocklist, generation=3, through=None, previous=2)
    assert parse_blocklist_body(body) == (blocklist, None)
    assert "# owned" not in body.split("```json")[0]
    assert "Continues #2." in body


def test_body_without_or_with_a_broken_machine_block_fails_closed() -> None:
    with pytest.raises(StateError, match="no machine-readable block"):
        parse_blocklist_body("# Tusk blocklist\n- `a/one`")
    broken = render_blocklist_body(Blocklist(), generation=1, through=None, previous=None)
    with pytest.raises(StateError, match="broken"):
        parse_blocklist_body(broken.replace('"repos": []', '"repos": [{"repo": 1}]'))


def test_huge_blocklist_keeps_the_machine_block_within_githubs_body_limit() -> None:
    many = tuple(repo(f"owner{n}/repository-with-a-long-name-{n}") for n in range(400))
    body = render_blocklist_body(Blocklist(repos=many), generation=1, through=None, previous=None)
    assert parse_blocklist_body(body)[0].repos == many
    assert "400 repositories" in body and len(body) <= 65536
