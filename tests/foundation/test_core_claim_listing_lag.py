"""The log issue claim stays exactly-once when GitHub's issue listing lags a write."""

from __future__ import annotations

from typing import Any

import pytest

from tusk.contracts.config import Settings
from tusk.errors import UserError
from tusk.github.gateway import Gateway
from tusk.issues import log_issue
from tusk.issues.log_issue import claim_log_issue

CONTROL = "alice/tusk-control"
SETTINGS = Settings(bot="tusk-bot", control_repo=CONTROL, allowed_users=("alice",))
CLAIM: dict[str, Any] = dict(
    jobid="alice-widgets-ic-0123456789", title="[Agent Log] x", body="# Task", labels=["workflow"]
)


def world(lag: float) -> dict[str, Any]:
    return {
        "settings": {"listing_lag_seconds": lag},
        "users": [{"login": "alice"}, {"login": "tusk-bot"}],
        "tokens": {"agent": {"user": "tusk-bot", "scopes": ["repo"]}},
        "repos": [{"name": CONTROL, "collaborators": {"tusk-bot": "write"}}],
    }


class RacingGateway(Gateway):
    """A rival delivery of the same job creates its log issue just before ours does."""

    def __init__(self, rival: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rival = rival

    def post(self, path: str, json: Any = None, **kwargs: Any) -> Any:
        if self.rival is not None and path.endswith("/issues"):
            rival, self.rival = self.rival, None
            rival()
        return super().post(path, json, **kwargs)


def race(local_github: Any, *, patience_sleep: Any = None) -> tuple[Any, Any]:
    sleep = patience_sleep or local_github.sleep
    theirs: list[Any] = []

    def rival() -> None:
        theirs.append(
            claim_log_issue(local_github.gateway("agent"), SETTINGS, **CLAIM, sleep=sleep)
        )

    ours = RacingGateway(
        rival,
        api_url=local_github.url,
        token=local_github.gateway("agent")._token,
        token_name="agent",
        sleep=local_github.sleep,
    )
    mine = claim_log_issue(ours, SETTINGS, **CLAIM, sleep=sleep)
    return mine, theirs[0]


def issues(local_github: Any) -> dict[int, dict[str, Any]]:
    repo = local_github.state()["repos"][CONTROL]
    return {int(n): i for n, i in repo["issues"].items()}


@pytest.mark.parametrize("lag", [0, 5, 45])
def test_two_racing_claims_have_one_winner_however_the_listing_lags(
    local_github: Any, lag: float
) -> None:
    local_github.load(world(lag))
    mine, theirs = race(local_github)
    assert theirs.won and not mine.won and mine.number == theirs.number == 1
    states = {n: (i["state"], i["state_reason"]) for n, i in issues(local_github).items()}
    assert states == {1: ("open", None), 2: ("closed", "duplicate")}


def test_without_waiting_for_the_listing_both_would_win(
    local_github: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race is real: deciding on the first listing lets both runs win."""
    monkeypatch.setattr(log_issue, "listed_with", lambda listed, number, **_: listed())
    local_github.load(world(45))
    mine, theirs = race(local_github)
    assert mine.won and theirs.won


def test_a_listing_that_never_catches_up_releases_the_claim_and_says_so(
    local_github: Any,
) -> None:
    local_github.load(world(100_000))
    with pytest.raises(UserError, match="did not show the new log issue #1") as stopped:
        claim_log_issue(local_github.gateway("agent"), SETTINGS, **CLAIM, sleep=local_github.sleep)
    assert "released its claim" in str(stopped.value)
    assert [(i["state"], i["state_reason"]) for i in issues(local_github).values()] == [
        ("closed", "duplicate")
    ]
    assert sum(local_github.sleeps) == 120  # the patience, in backoff steps
