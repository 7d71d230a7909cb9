"""The log issue claim stays exactly-once however GitHub's issue listing lags a write,
in creation order or not: it is decided on issues read by their own URLs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tusk.contracts.config import Settings
from tusk.github.gateway import Gateway
from tusk.issues.log_issue import (
    LogIssueClaim,
    claim_log_issue,
    find_log_issues,
    log_marker,
)

CONTROL = "alice/tusk-control"
SETTINGS = Settings(bot="tusk-bot", control_repo=CONTROL, allowed_users=("alice",))
JOBID = "alice-widgets-ic-0123456789"
CLAIM: dict[str, Any] = dict(jobid=JOBID, title="[Agent Log] x", body="# Task", labels=["workflow"])
# The first new issue stays out of listings for 45 s, the second for none: the later
# issue shows up first (GitHub documents no order in which listings catch up).
REORDERING = [45.0, 0.0]


def world(lag: float | list[float]) -> dict[str, Any]:
    setting = (
        {"listing_lags_seconds": lag} if isinstance(lag, list) else {"listing_lag_seconds": lag}
    )
    return {
        "settings": setting,
        "users": [{"login": "alice"}, {"login": "tusk-bot"}],
        "tokens": {"agent": {"user": "tusk-bot", "scopes": ["repo"]}},
        "repos": [{"name": CONTROL, "collaborators": {"tusk-bot": "write"}}],
    }


class RivalFirst(Gateway):
    """The rival delivery's gateway: once its log issue is created, our whole claim runs
    before the rival goes on (its issue has the lower number, our run decides first)."""

    def __init__(self, ours: Callable[[], None], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ours: Callable[[], None] | None = ours

    def post(self, path: str, json: Any = None, **kwargs: Any) -> Any:
        answer = super().post(path, json, **kwargs)
        if self.ours is not None and path.endswith("/issues"):
            ours, self.ours = self.ours, None
            ours()
        return answer


def race(
    local_github: Any, claim: Callable[[Gateway], LogIssueClaim]
) -> tuple[LogIssueClaim, LogIssueClaim]:
    """(rival, ours): two deliveries of one job, interleaved as ``RivalFirst`` says."""
    mine: list[LogIssueClaim] = []
    rival = RivalFirst(
        lambda: mine.append(claim(local_github.gateway("agent"))),
        api_url=local_github.url,
        token=local_github.gateway("agent")._token,
        token_name="agent",
        sleep=local_github.sleep,
    )
    theirs = claim(rival)
    return theirs, mine[0]


def new_claim(gateway: Gateway) -> LogIssueClaim:
    return claim_log_issue(gateway, SETTINGS, **CLAIM, sleep=gateway.sleep)


def listing_order_claim(gateway: Gateway) -> LogIssueClaim:
    """The claim as it was decided before: create, wait until the listing shows the new
    issue, let the lowest listed number win (assuming a listing that shows an issue
    shows every earlier one)."""
    body = f"{log_marker(JOBID, nonce=str(id(gateway)))}\n# Task"
    path = f"/repos/{CONTROL}/issues"
    created = gateway.post(path, json={"title": "x", "body": body, "labels": ["workflow"]}).body
    number = int(created["number"])
    while not any(issue.number == number for issue in listed(gateway)):
        gateway.sleep(1.0)  # wait until the listing shows the new issue
    lowest = min(issue.number for issue in listed(gateway))
    return LogIssueClaim(lowest, "", won=lowest == number)


def listed(gateway: Gateway) -> list[Any]:
    return find_log_issues(gateway, SETTINGS, jobid=JOBID, state="all")


def issues(local_github: Any) -> dict[int, dict[str, Any]]:
    repo = local_github.state()["repos"][CONTROL]
    return {int(n): i for n, i in repo["issues"].items()}


def listed_numbers(gateway: Gateway) -> list[int]:
    path = f"/repos/{CONTROL}/issues"
    return sorted(int(i["number"]) for i in gateway.paginate(path, params={"state": "all"}))


def test_a_reordering_lag_lists_a_later_issue_before_an_earlier_one(local_github: Any) -> None:
    """The assumption the old claim rested on, shown false by the stand-in."""
    local_github.load(world(REORDERING))
    gateway = local_github.gateway("agent")
    for title in ("first", "second"):
        gateway.post(f"/repos/{CONTROL}/issues", json={"title": title})
    assert listed_numbers(gateway) == [2]  # issue 2 is listed, issue 1 is not yet
    assert gateway.get(f"/repos/{CONTROL}/issues/1")["title"] == "first"  # its own URL is
    local_github.advance(45)
    assert listed_numbers(gateway) == [1, 2]


def test_deciding_on_listing_order_lets_both_racing_runs_win_under_a_reordering_lag(
    local_github: Any,
) -> None:
    local_github.load(world(REORDERING))
    theirs, mine = race(local_github, listing_order_claim)
    assert theirs.won and mine.won  # two runs for one job: the old claim's failure


@pytest.mark.parametrize(
    "lag",
    [0, 5, 45, REORDERING, [0.0, 45.0], [100_000.0, 0.0], [100_000.0]],
    ids=["none", "5s", "45s", "reordering", "in-order", "reordering-never", "never"],
)
def test_two_runs_racing_for_one_job_give_exactly_one_run_however_the_listing_lags(
    local_github: Any, lag: float | list[float]
) -> None:
    local_github.load(world(lag))
    theirs, mine = race(local_github, new_claim)
    assert [theirs.won, mine.won] == [True, False]
    assert mine.number == theirs.number == 1
    states = {n: (i["state"], i["state_reason"]) for n, i in issues(local_github).items()}
    # Where the listing already shows the rival's claim, ours is never created.
    expected = {1: ("open", None), 2: ("closed", "duplicate")}
    rival_listed_at_once = (lag[0] if isinstance(lag, list) else lag) == 0
    assert states == ({1: ("open", None)} if rival_listed_at_once else expected)


def test_a_listing_that_never_catches_up_does_not_hold_up_the_claim(local_github: Any) -> None:
    local_github.load(world(100_000))
    claim = new_claim(local_github.gateway("agent"))
    assert claim.won and claim.number == 1
    assert local_github.sleeps == []  # nothing waits for the listing any more


def test_the_claim_reads_the_issues_below_its_own_by_their_urls_back_past_the_lease(
    local_github: Any,
) -> None:
    local_github.load(world(100_000))
    gateway = local_github.gateway("agent")
    for title in ("old", "recent"):
        gateway.post(f"/repos/{CONTROL}/issues", json={"title": title})
        if title == "old":
            local_github.advance(31 * 60)  # past the 30-minute lease
    journal_start = len(local_github.journal())
    assert new_claim(gateway).won
    reads = [
        entry["path"]
        for entry in local_github.journal()[journal_start:]
        if entry["method"] == "GET" and "/issues/" in entry["path"]
    ]
    assert reads == [f"/repos/{CONTROL}/issues/2", f"/repos/{CONTROL}/issues/1"]


def test_issues_a_listing_already_shows_are_not_read_again_by_their_urls(
    local_github: Any,
) -> None:
    local_github.load(world([0.0, 0.0, 100_000.0]))  # the third new issue lags
    gateway = local_github.gateway("agent")
    for title in ("one", "two", "three"):
        gateway.post(f"/repos/{CONTROL}/issues", json={"title": title})
    start = len(local_github.journal())
    assert new_claim(gateway).won
    reads = [
        entry["path"]
        for entry in local_github.journal()[start:]
        if entry["method"] == "GET" and "/issues/" in entry["path"]
    ]
    assert reads == [f"/repos/{CONTROL}/issues/3"]  # only the one the listing hides
