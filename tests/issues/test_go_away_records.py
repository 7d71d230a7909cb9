"""Pure: the blocklist the go-away log issues record (used when the blocklist issue is gone)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from tusk.contracts.models import BlockedRepo, BlockedUser, Blocklist
from tusk.issues.go_away_records import BlocklistGone, fold_records, go_away_record

BOT = "tusk-bot"
AT = datetime(2026, 11, 30, tzinfo=UTC)
TITLE = "[Agent Log] alice/widgets #1 go away — 2026-11-30 07:00"


def log(
    body: str, *, state: str = "closed", author: str = BOT, title: str = TITLE
) -> dict[str, Any]:
    return {
        "user": {"login": author},
        "body": body,
        "state": state,
        "title": title,
        "html_url": "https://github.com/ops/control/issues/4",
    }


def blocked(repo: str | None, user: str) -> Blocklist:
    repos = (BlockedRepo(repo=repo, by=user, at=AT),) if repo else ()
    return Blocklist(repos=repos, users=(BlockedUser(user=user, at=AT),))


def test_no_go_away_on_record_means_no_blocklist_is_right() -> None:
    assert fold_records([log("# Task", title="[Agent Log] alice/widgets #7")], BOT) is None


def test_the_records_of_every_finished_go_away_add_up_whatever_the_case() -> None:
    items = [
        log(go_away_record("j1", 0, blocked("alice/widgets", "bob"))),
        log(go_away_record("j2", 1, blocked("ALICE/widgets", "carol"))),
    ]
    folded = fold_records(items, BOT)
    assert folded is not None
    assert [e.repo for e in folded.repos] == ["alice/widgets"]
    assert [e.user for e in folded.users] == ["bob", "carol"]


def test_a_go_away_still_at_work_and_one_that_blocked_nothing_add_nothing() -> None:
    items = [
        log('<!-- tusk:job {"jobid":"j"} -->\n# Go away\n', state="open"),
        log(go_away_record("j3", 2, None)),
    ]
    assert fold_records(items, BOT) == Blocklist()


def test_records_written_by_anyone_but_the_bot_are_ignored() -> None:
    forged = log(go_away_record("j", 0, blocked("alice/widgets", "bob")), author="mallory")
    assert fold_records([forged], BOT) is None


@pytest.mark.parametrize(
    "body",
    ["# Go away\n", '<!-- tusk:go-away {"jobid":"j","failures":0,"blocked":{"repos":[1]}} -->'],
    ids=["record edited away", "garbled record"],
)
def test_a_finished_go_away_whose_record_cannot_be_read_stops_the_reader(body: str) -> None:
    with pytest.raises(BlocklistGone, match="cannot rebuild it"):
        fold_records([log(body)], BOT)
