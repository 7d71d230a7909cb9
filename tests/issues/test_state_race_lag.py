"""Two writers creating the same state issue at once settle on one, however the listing
lags: the race is decided on the issues just below the new one, read by their URLs."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from tusk.contracts.config import Limits, Settings
from tusk.contracts.models import BlockedUser, Blocklist
from tusk.issues.state import StateStore

CONTROL = "alice/tusk-control"
WHEN = datetime(2026, 3, 4, tzinfo=UTC)


def world(lags: list[float]) -> dict[str, Any]:
    return {
        "settings": {"listing_lags_seconds": lags},
        "users": [{"login": "tusk-bot"}, {"login": "alice"}],
        "tokens": {"agent": {"user": "tusk-bot", "scopes": ["repo"]}},
        "repos": [{"name": CONTROL, "collaborators": {"tusk-bot": "write"}}],
    }


def store(github: Any) -> StateStore:
    settings = Settings(
        bot="tusk-bot", control_repo=CONTROL, allowed_users=("alice",), limits=Limits()
    )
    return StateStore(github.gateway("agent"), settings)


def block(user: str) -> Any:
    entry = BlockedUser(user=user, at=WHEN)
    return lambda blocklist: Blocklist(repos=blocklist.repos, users=(*blocklist.users, entry))


@pytest.mark.parametrize("lags", [[100_000.0], [60.0, 0.0]], ids=["never", "reordering"])
def test_a_second_writer_finds_the_first_ones_new_blocklist_issue_by_its_url(
    local_github: Any, lags: list[float]
) -> None:
    local_github.load(world(lags))
    store(local_github).update_blocklist(block("bob"))  # issue 1, not listed yet
    store(local_github).update_blocklist(block("carol"))  # its own listing shows none
    local_github.advance(100_000)  # every listing has caught up
    issues = local_github.state()["repos"][CONTROL]["issues"]
    states = {int(n): (i["state"], i["state_reason"]) for n, i in issues.items()}
    assert states == {1: ("open", None), 2: ("closed", "duplicate")}
    blocked = store(local_github).read_blocklist()
    assert sorted(e.user for e in blocked.users) == ["bob", "carol"]  # both kept, on #1
