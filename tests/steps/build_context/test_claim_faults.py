"""The log issue claim under the local GitHub's faults, and its lease: per trigger
exactly one run proceeds (or one failure record is left), never zero, never two."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from bc_samples import REPO, settings

from tusk.issues.lease import HandshakeUndecided, report_progress
from tusk.issues.log_issue import claim_log_issue, find_log_issues, log_marker, record_failure
from tusk.steps.build_context import log_body as lb

CONTROL = "alice/tusk-control"
JOBID = "alice-widgets-9000"
ISSUES = rf"^/repos/{CONTROL}/issues$"
START = datetime(2026, 11, 30, 11, 30, tzinfo=UTC)


def scenario(*issues: dict[str, Any], lag: float = 0, comment_lag: float = 0) -> dict[str, Any]:
    return {
        "now": START.isoformat().replace("+00:00", "Z"),
        "settings": {"listing_lag_seconds": lag, "comment_listing_lag_seconds": comment_lag},
        "users": [{"login": "alice"}, {"login": "tusk-bot"}],
        "tokens": {"agent": {"user": "tusk-bot", "scopes": ["repo"]}},
        "repos": [
            {"name": REPO, "collaborators": {"tusk-bot": "write"}},
            {
                "name": CONTROL,
                "private": True,
                "collaborators": {"tusk-bot": "write"},
                "labels": ["workflow", "bug"],
                "issues": list(issues),
            },
        ],
    }


def orphan(*, minutes_old: float, comments: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A claim made ``minutes_old`` before START by a run that then vanished."""
    created = START - timedelta(minutes=minutes_old)
    return {
        "number": 1,
        "author": "tusk-bot",
        "title": "[Agent Log] alice/widgets #7",
        "body": log_marker(JOBID, REPO, nonce="orphan-nonce") + "\n# Task\n",
        "labels": ["workflow"],
        "created_at": created.isoformat().replace("+00:00", "Z"),
        "comments": comments or [],
    }


@pytest.fixture
def gh(local_github: Any) -> Any:
    local_github.load(scenario())
    return local_github


def claim(gh: Any, *, now: datetime | None = None, **gateway_kwargs: Any) -> Any:
    body = lb.log_issue_body(
        jobid=JOBID,
        repo=REPO,
        task_text="t",
        context_text="c",
        artifact_name="a",
        artifact_url=None,
    ).body
    return claim_log_issue(
        gh.gateway("agent", **gateway_kwargs),
        settings(),
        jobid=JOBID,
        title="[Agent Log] alice/widgets #7",
        body=body,
        labels=["workflow"],
        repo=REPO,
        now=now,
    )


def issues(gh: Any) -> list[dict[str, Any]]:
    return list(gh.gateway("agent").paginate(f"/repos/{CONTROL}/issues", params={"state": "all"}))


def open_claims(gh: Any) -> list[int]:
    return [i["number"] for i in issues(gh) if i["state"] == "open"]


@pytest.mark.parametrize(
    "fault",
    [
        {"status": 502},
        {"status": 500},
        {"drop": True},
    ],
    ids=["502", "500", "reset"],
)
def test_a_claim_that_landed_although_its_answer_was_lost_is_the_runs_own(
    gh: Any, fault: dict[str, Any]
) -> None:
    gh.add_fault("POST", ISSUES, lands=True, **fault)
    first = claim(gh)
    assert first.won  # before: the run closed its own issue as a duplicate and stopped
    assert len(issues(gh)) == 1 and open_claims(gh) == [first.number]
    again = claim(gh)  # a later delivery of the same job
    assert not again.won and again.number == first.number
    assert len(issues(gh)) == 1


def test_a_lost_claim_is_found_although_the_listing_lags_it(local_github: Any) -> None:
    """The look-up repeats with growing pauses until the lagging listing shows the claim."""
    local_github.load(scenario(lag=20))
    local_github.add_fault("POST", ISSUES, status=502, lands=True)
    first = claim(local_github)
    assert first.won and len(issues(local_github)) == 1
    posts = [
        e for e in local_github.journal() if e["method"] == "POST" and e["path"].endswith("/issues")
    ]
    assert len(posts) == 1 and sum(local_github.sleeps) >= 20


def test_a_claim_answered_after_the_client_timeout_is_found_not_doubled(gh: Any) -> None:
    gh.add_fault("POST", ISSUES, delay=1.0, lands=True)
    first = claim(gh, timeout=0.3)
    assert first.won and len(issues(gh)) == 1


def test_a_claim_refused_by_a_502_that_did_not_land_is_sent_again(gh: Any) -> None:
    gh.add_fault("POST", ISSUES, status=502)
    first = claim(gh)
    assert first.won and len(issues(gh)) == 1


def test_a_late_copy_of_the_runs_own_claim_is_closed_and_the_run_proceeds(gh: Any) -> None:
    """A lost answer whose issue the lagging listing did not show is sent again; when
    both copies turn up, both carry the run's nonce: the lower one is the claim."""
    gateway = gh.gateway("agent")
    body = log_marker(JOBID, REPO, nonce="mine") + "\n# Task\n"
    for _ in range(2):  # what the two sends left behind
        gateway.post(
            f"/repos/{CONTROL}/issues",
            json={"title": "[Agent Log] x", "body": body, "labels": ["workflow"]},
        )
    result = claim_log_issue(
        gateway,
        settings(),
        jobid=JOBID,
        title="[Agent Log] x",
        body=body,
        labels=["workflow"],
        repo=REPO,
        nonce="mine",
    )
    assert result.won and result.number == 1
    states = {i["number"]: (i["state"], i["state_reason"]) for i in issues(gh)}
    assert states == {1: ("open", None), 2: ("closed", "duplicate")}


def test_an_orphan_claim_past_its_lease_is_taken_over(local_github: Any) -> None:
    local_github.load(scenario(orphan(minutes_old=31)))
    result = claim(local_github, now=START)
    assert result.won and result.number == 2
    by_number = {i["number"]: i for i in issues(local_github)}
    assert (by_number[1]["state"], by_number[1]["state_reason"]) == ("closed", "duplicate")
    comments = local_github.gateway("agent").get(f"/repos/{CONTROL}/issues/1/comments")
    assert "tusk:takeover" in comments[0]["body"] and "30 minutes" in comments[0]["body"]
    assert comments[-1]["body"].startswith(f"Taken over by {result.url}")
    # The orphan's run, should it ever start after all, learns it must not go on.
    status, _ = report_progress(
        local_github.gateway("agent"), CONTROL, 1, bot="tusk-bot", jobid=JOBID, nonce="orphan-nonce"
    )
    assert status == "dead"
    again = claim(local_github, now=START)  # yet another delivery: stops at the new claim
    assert not again.won and again.number == 2


def test_a_silent_claim_within_its_lease_is_not_taken_over(local_github: Any) -> None:
    local_github.load(scenario(orphan(minutes_old=5)))
    result = claim(local_github, now=START)
    assert not result.won and result.number == 1 and len(issues(local_github)) == 1


def test_a_claim_whose_run_reported_progress_is_never_taken_over(local_github: Any) -> None:
    progress = {
        "author": "tusk-bot",
        "body": '<!-- tusk:progress {"jobid":"alice-widgets-9000","nonce":"orphan-nonce"} -->\n'
        "⏳ The agent run has started.",
    }
    local_github.load(scenario(orphan(minutes_old=600, comments=[progress])))
    result = claim(local_github, now=START)
    assert not result.won and result.number == 1 and len(issues(local_github)) == 1


def test_progress_forged_by_someone_else_does_not_keep_a_claim_alive(local_github: Any) -> None:
    forged = {
        "author": "alice",
        "body": '<!-- tusk:progress {"jobid":"alice-widgets-9000","nonce":"x"} -->\nalive!',
    }
    local_github.load(scenario(orphan(minutes_old=31, comments=[forged])))
    assert claim(local_github, now=START).won


def test_when_the_run_reports_progress_first_the_takeover_loses(local_github: Any) -> None:
    """The race the handshake settles: the claim's run starts just as a later delivery
    decides the claim is an orphan. The first of the two comments wins for both."""
    local_github.load(scenario(orphan(minutes_old=31)))
    gateway = local_github.gateway("agent")
    status, _ = report_progress(
        gateway, CONTROL, 1, bot="tusk-bot", jobid=JOBID, nonce="orphan-nonce"
    )
    assert status == "alive"
    result = claim(local_github, now=START)
    assert not result.won and result.number == 1 and len(issues(local_github)) == 1


def test_a_takeover_holds_although_the_comment_listing_lags_it(local_github: Any) -> None:
    """The later delivery decides only once the listing shows its own takeover."""
    local_github.load(scenario(orphan(minutes_old=31), comment_lag=20))
    result = claim(local_github, now=START)
    assert result.won and result.number == 2  # before: it saw no takeover and stood down
    assert sum(local_github.sleeps) >= 20
    status, _ = report_progress(
        local_github.gateway("agent"), CONTROL, 1, bot="tusk-bot", jobid=JOBID, nonce="orphan-nonce"
    )
    assert status == "dead"


def test_a_slow_run_whose_listing_still_hides_the_takeover_stops(local_github: Any) -> None:
    """The claim's run starts just after a later delivery posted its takeover, while the
    comment listing still hides it: the run waits until its own progress comment is
    listed, sees the takeover before it, and stops. Before, it saw neither comment and
    went on, next to the delivery that took over: two runs."""
    local_github.load(scenario(orphan(minutes_old=31), comment_lag=20))
    gateway = local_github.gateway("agent")
    takeover = '<!-- tusk:takeover {"jobid":"alice-widgets-9000","nonce":"later"} -->\nmine now'
    gateway.post(f"/repos/{CONTROL}/issues/1/comments", json={"body": takeover})
    status, _ = report_progress(
        gateway, CONTROL, 1, bot="tusk-bot", jobid=JOBID, nonce="orphan-nonce"
    )
    assert status == "dead"


def test_a_run_that_never_sees_its_own_progress_listed_stops_and_says_why(
    local_github: Any,
) -> None:
    local_github.load(scenario(orphan(minutes_old=1), comment_lag=10_000))
    with pytest.raises(HandshakeUndecided, match="cannot be told"):
        report_progress(
            local_github.gateway("agent"), CONTROL, 1, bot="tusk-bot", jobid=JOBID, nonce="n"
        )


def test_a_failure_record_lost_behind_a_502_is_not_recorded_twice(gh: Any) -> None:
    gh.add_fault("POST", ISSUES, status=502, lands=True)
    url = record_failure(
        gh.gateway("agent"), settings(), jobid=JOBID, repo=REPO, title="lost", body="shards lost"
    )
    records = find_log_issues(gh.gateway("agent"), settings(), jobid=JOBID, state="all")
    assert [r.url for r in records] == [url] and records[0].failure
    comments = rf"^/repos/{CONTROL}/issues/1/comments$"
    gh.add_fault("POST", comments, status=502, lands=True)
    again = record_failure(
        gh.gateway("agent"), settings(), jobid=JOBID, repo=REPO, title="lost", body="again"
    )
    assert again == url
    assert len(gh.gateway("agent").get(f"/repos/{CONTROL}/issues/1/comments")) == 1
