"""State issues fail closed: a blocklist whose body or label a collaborator damaged is
rebuilt from the bot's change comments (or reading it stops with a clear error), never
read as empty; history and memory survive the same; entries and changes are posted once."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from tusk.contracts.config import Limits, Settings
from tusk.contracts.models import BlockedRepo, BlockedUser, Blocklist
from tusk.issues.blocklist_codec import BlocklistChange, rebuild_blocklist
from tusk.issues.state import StateStore
from tusk.issues.state_codec import StateError

CONTROL = "alice/tusk-control"
WHEN = datetime(2026, 3, 4, tzinfo=UTC)
COMMENTS = rf"^/repos/{CONTROL}/issues/\d+/comments$"
SCENARIO: dict[str, Any] = {
    "users": [{"login": "tusk-bot"}, {"login": "alice"}],
    "tokens": {
        "agent": {"user": "tusk-bot", "scopes": ["repo"]},
        "bot-read": {"user": "tusk-bot", "scopes": ["repo"], "read_only": True},
        "alice": {"user": "alice", "scopes": ["repo"]},
    },
    "repos": [
        {
            "name": CONTROL,
            "private": False,
            # alice maintains the control repository: she can edit and relabel anything
            "collaborators": {"tusk-bot": "write", "alice": "admin"},
        }
    ],
}


def settings(rollover: int = 2000) -> Settings:
    return Settings(
        bot="tusk-bot",
        control_repo=CONTROL,
        allowed_users=("alice",),
        limits=Limits(state_issue_rollover=rollover),
    )


@pytest.fixture
def github(local_github: Any) -> Any:
    local_github.load(SCENARIO)
    return local_github


def store(github: Any, token: str = "agent", rollover: int = 2000) -> StateStore:
    return StateStore(github.gateway(token), settings(rollover))


def block(github: Any, *repos: str) -> int:
    """Block ``repos`` as go-away does; the blocklist issue's number."""
    writer = store(github)
    for name in repos:
        entry = BlockedRepo(repo=name, by="alice", at=WHEN)
        writer.update_blocklist(lambda b, e=entry: Blocklist(repos=(*b.repos, e), users=b.users))
    issue = writer.state_issue("blocklist", create=False)
    assert issue is not None
    return issue.number


def blocked(github: Any) -> list[str]:
    """What a reader (the poller, the MCP server) sees: the read-only token."""
    return sorted(e.repo for e in store(github, "bot-read").read_blocklist().repos)


def edit_body(github: Any, number: int, body: str) -> None:
    github.gateway("alice").patch(f"/repos/{CONTROL}/issues/{number}", json={"body": body})


def issue(github: Any, number: int) -> dict[str, Any]:
    return github.gateway("alice").get(f"/repos/{CONTROL}/issues/{number}")


def test_a_body_that_lost_its_marker_still_blocks_everything(github: Any) -> None:
    number = block(github, "evil/one", "evil/two")
    edit_body(github, number, "cleaned this up, nothing to see here")
    assert blocked(github) == ["evil/one", "evil/two"]  # before: [] and runs again


def test_a_broken_machine_block_is_rebuilt_from_the_change_comments(github: Any) -> None:
    number = block(github, "evil/one")
    body = issue(github, number)["body"]
    edit_body(github, number, body.replace('"repos"', '"repoz"'))
    assert blocked(github) == ["evil/one"]


def test_a_removed_label_does_not_unblock_and_the_next_writer_puts_it_back(
    github: Any,
) -> None:
    number = block(github, "evil/one")
    github.gateway("alice").delete(f"/repos/{CONTROL}/issues/{number}/labels/tusk-blocklist")
    assert blocked(github) == ["evil/one"]  # found by its title, not its label
    block(github, "evil/two")  # a go-away: writes to the same issue, not a new one
    assert blocked(github) == ["evil/one", "evil/two"]
    assert [label["name"] for label in issue(github, number)["labels"]] == ["tusk-blocklist"]
    listed = github.gateway("alice").get(f"/repos/{CONTROL}/issues", params={"state": "all"})
    assert [i["number"] for i in listed] == [number]


def test_the_next_writer_repairs_a_damaged_body(github: Any) -> None:
    number = block(github, "evil/one")
    edit_body(github, number, "oops")
    block(github, "evil/two")
    body = issue(github, number)["body"]
    assert "<!-- tusk:state " in body and "`evil/one`" in body and "`evil/two`" in body
    assert blocked(github) == ["evil/one", "evil/two"]


def test_change_comments_by_anyone_but_the_bot_are_ignored_in_a_rebuild(github: Any) -> None:
    number = block(github, "evil/one")
    edit_body(github, number, "gone")
    forged = BlocklistChange(remove_repos=("evil/one",))
    from tusk.issues.blocklist_codec import change_comment_body

    github.gateway("alice").post(
        f"/repos/{CONTROL}/issues/{number}/comments", json={"body": change_comment_body(forged)}
    )
    assert blocked(github) == ["evil/one"]


def test_a_damaged_blocklist_after_a_rollover_keeps_what_it_carried(github: Any) -> None:
    writer = store(github, rollover=10)
    for n in range(12):  # enough changes to roll over to a second issue
        entry = BlockedRepo(repo=f"owner{n}/app", by="alice", at=WHEN)
        writer.update_blocklist(lambda b, e=entry: Blocklist(repos=(*b.repos, e)))
    current = writer.state_issue("blocklist", create=False)
    assert current is not None and current.generation == 2
    edit_body(github, current.number, "")
    assert len(blocked(github)) == 12  # from the snapshot comment the rollover left


def test_when_nothing_can_be_looked_up_reading_stops_with_a_clear_error(github: Any) -> None:
    number = block(github, "evil/one")
    github.gateway("alice").delete(f"/repos/{CONTROL}/issues/{number}/labels/tusk-blocklist")
    github.add_fault("GET", r"^/search/issues$", status=503, count=None)
    with pytest.raises(StateError) as stopped:
        store(github, "bot-read").read_blocklist()
    assert "Cannot tell whether the blocklist issue exists" in stopped.value.title
    assert "tusk-blocklist" in stopped.value.hint


def test_no_blocklist_at_all_is_an_empty_blocklist(github: Any) -> None:
    assert blocked(github) == []


def test_users_survive_a_rebuild_too(github: Any) -> None:
    writer = store(github)
    user = BlockedUser(user="mallory", at=WHEN)
    writer.update_blocklist(lambda b: Blocklist(users=(user,)))
    issue_number = writer.state_issue("blocklist", create=False)
    assert issue_number is not None
    edit_body(github, issue_number.number, "")
    assert store(github, "bot-read").read_blocklist().blocks("mallory/anything")


def test_a_change_comment_lost_behind_a_502_is_posted_once(github: Any) -> None:
    number = block(github, "evil/one")
    github.add_fault("POST", COMMENTS, status=502, lands=True)
    block(github, "evil/two")
    comments = github.gateway("alice").get(f"/repos/{CONTROL}/issues/{number}/comments")
    changes = [c for c in comments if "tusk:blocklist-change" in c["body"]]
    assert len(changes) == 2 and blocked(github) == ["evil/one", "evil/two"]


def test_a_log_issue_given_the_blocklist_label_is_not_taken_for_the_blocklist(
    github: Any,
) -> None:
    number = block(github, "evil/one")
    log = (
        github.gateway("agent")
        .post(
            f"/repos/{CONTROL}/issues",
            json={
                "title": "[Agent Log] x",
                "body": '<!-- tusk:job {"jobid":"alice-x-1"} -->\n# Task',
            },
        )
        .body
    )
    github.gateway("alice").post(
        f"/repos/{CONTROL}/issues/{log['number']}/labels", json={"labels": ["tusk-blocklist"]}
    )
    assert blocked(github) == ["evil/one"]
    block(github, "evil/two")
    assert issue(github, log["number"])["body"].endswith("# Task")  # left alone
    assert store(github).state_issue("blocklist", create=False).number == number  # type: ignore[union-attr]


# --------------------------------------------------------------------------- history, memory


def test_a_history_entry_lost_behind_a_502_is_written_once(github: Any) -> None:
    writer = store(github)
    writer.append_entry("history", "first", jobid="alice-widgets-1")
    github.add_fault("POST", COMMENTS, status=502, lands=True)
    writer.append_entry("history", "second", jobid="alice-widgets-2")
    texts = [e.text for e in store(github, "bot-read").read_entries("history")]
    assert texts == ["second", "first"]
    issue_ = writer.state_issue("history", create=False)
    assert issue_ is not None
    assert (
        len(github.gateway("alice").get(f"/repos/{CONTROL}/issues/{issue_.number}/comments")) == 2
    )


def test_a_late_copy_of_an_entry_is_read_once(github: Any) -> None:
    writer = store(github)
    writer.append_entry("memory", "prefers tabs", jobid="alice-widgets-1")
    issue_ = writer.state_issue("memory", create=False)
    assert issue_ is not None
    [comment] = github.gateway("agent").get(f"/repos/{CONTROL}/issues/{issue_.number}/comments")
    github.gateway("agent").post(  # the copy a repeat left after its look-up gave up
        f"/repos/{CONTROL}/issues/{issue_.number}/comments", json={"body": comment["body"]}
    )
    assert [e.text for e in store(github, "bot-read").read_entries("memory")] == ["prefers tabs"]


def test_history_survives_a_lost_marker_and_a_lost_label(github: Any) -> None:
    writer = store(github)
    writer.append_entry("history", "fixed a typo", jobid="alice-widgets-1")
    issue_ = writer.state_issue("history", create=False)
    assert issue_ is not None
    edit_body(github, issue_.number, "history, tidied")
    github.gateway("alice").delete(f"/repos/{CONTROL}/issues/{issue_.number}/labels/tusk-history")
    assert [e.text for e in store(github, "bot-read").read_entries("history")] == ["fixed a typo"]
    store(github).append_entry("history", "opened a PR", jobid="alice-widgets-2")  # no 2nd issue
    listed = github.gateway("alice").get(f"/repos/{CONTROL}/issues", params={"state": "all"})
    assert [i["number"] for i in listed] == [issue_.number]
    assert [e.text for e in store(github, "bot-read").read_entries("history")] == [
        "opened a PR",
        "fixed a typo",
    ]
    repaired = issue(github, issue_.number)
    assert "<!-- tusk:state " in repaired["body"]
    assert [label["name"] for label in repaired["labels"]] == ["tusk-history"]


def test_an_issue_someone_else_titled_like_a_state_issue_is_not_one(github: Any) -> None:
    github.gateway("alice").post(
        f"/repos/{CONTROL}/issues", json={"title": "Tusk blocklist", "body": "empty!"}
    )
    assert blocked(github) == []
    block(github, "evil/one")  # the bot opens its own; alice's issue is not taken for it
    assert blocked(github) == ["evil/one"]


# --------------------------------------------------------------------------- pure


def test_a_rebuild_starts_at_the_last_snapshot() -> None:
    a = BlockedRepo(repo="a/a", by="x", at=WHEN)
    b = BlockedRepo(repo="b/b", by="x", at=WHEN)
    changes = [
        (1, "t", BlocklistChange(add_repos=(a,))),
        (2, "t", BlocklistChange.whole(Blocklist(repos=(b,)))),
        (3, "t", BlocklistChange(add_repos=(a,))),
        (4, "t", BlocklistChange(remove_repos=("b/b",))),
    ]
    assert [e.repo for e in rebuild_blocklist(changes, Blocklist()).repos] == ["a/a"]
    without_snapshot = [changes[0], changes[3]]
    base = Blocklist(repos=(b,))
    assert [e.repo for e in rebuild_blocklist(without_snapshot, base).repos] == ["a/a"]
