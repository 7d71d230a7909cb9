"""Limits across runs: the pure decision over the runs the log issues hold."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tusk.contracts.config import Limits
from tusk.contracts.limits import (
    MIN_RUN_BUDGET_USD,
    RunRecord,
    held,
    in_window,
    refusal,
    requester_left,
)

NOW = datetime(2026, 1, 2, 12, 0, tzinfo=UTC)


def run(n: int, *, hours_ago: float, who: str = "alice", repo: str = "a/w", cost: float = 0.0):
    return RunRecord(f"job-{n}", NOW - timedelta(hours=hours_ago), who, repo, cost)


def check(runs: list[RunRecord], limits: Limits, *, jobid: str = "new", who: str = "alice"):
    return refusal(runs, jobid=jobid, requester=who, repo="a/w", now=NOW, limits=limits)


def test_defaults_are_small_team_sized() -> None:
    limits = Limits()
    assert limits.daily_budget_usd == 20.0
    assert limits.runs_per_requester == 10
    assert limits.requester_budget_usd == 10.0  # two runs at the default $5 budget
    assert limits.usage_window_hours == 24.0
    assert limits.over_limit == "wait"


def test_requester_under_the_limit_may_run() -> None:
    runs = [run(i, hours_ago=i + 1) for i in range(9)]
    assert check(runs, Limits(runs_per_requester=10)) is None


def test_requester_at_the_limit_is_refused_until_the_oldest_run_leaves_the_window() -> None:
    runs = [run(i, hours_ago=i + 1) for i in range(10)]  # oldest 10 h ago
    found = check(runs, Limits(runs_per_requester=10, runs_per_repository=None))
    assert found is not None and found.limit == "runs_per_requester"
    assert found.resets_at == NOW - timedelta(hours=10) + timedelta(hours=24)
    assert "10 run(s)" in found.sentence() and "requester alice" in found.sentence()


def test_requester_limit_counts_logins_case_insensitively_and_nobody_else() -> None:
    runs = [run(i, hours_ago=1, who="Alice") for i in range(3)] + [
        run(10 + i, hours_ago=1, who="bob") for i in range(5)
    ]
    limits = Limits(runs_per_requester=3, runs_per_repository=None)
    assert check(runs, limits, who="alice") is not None
    assert check(runs, limits, who="carol") is None


def test_runs_older_than_the_window_do_not_count() -> None:
    runs = [run(i, hours_ago=24 + i) for i in range(20)]
    assert check(runs, Limits(runs_per_requester=1)) is None
    assert in_window(runs, now=NOW, hours=24) == []


def test_a_redelivery_of_a_counted_job_is_not_a_new_run() -> None:
    runs = [run(i, hours_ago=1) for i in range(10)]
    assert check(runs, Limits(runs_per_requester=10), jobid="job-3") is None


def test_repository_limit() -> None:
    runs = [run(i, hours_ago=2, who=f"user{i}") for i in range(4)]
    found = check(runs, Limits(runs_per_requester=None, runs_per_repository=4))
    assert found is not None and found.limit == "runs_per_repository"
    assert found.scope == "repository a/w"


def test_daily_budget_refuses_at_the_cap_and_resets_when_enough_spend_leaves() -> None:
    runs = [
        run(1, hours_ago=20, cost=12.0),
        run(2, hours_ago=5, cost=6.0),
        run(3, hours_ago=1, cost=3.0),
    ]
    found = check(
        runs, Limits(daily_budget_usd=20.0, runs_per_requester=None, requester_budget_usd=None)
    )
    assert found is not None and found.limit == "daily_budget_usd"
    assert found.used == "$21.00" and found.allowed == "$20.00"
    # Once the $12 run of 20 h ago leaves, $9 is left: under the cap.
    assert found.resets_at == NOW - timedelta(hours=20) + timedelta(hours=24)
    assert (
        check(
            runs, Limits(daily_budget_usd=21.5, runs_per_requester=None, requester_budget_usd=None)
        )
        is None
    )


def test_daily_budget_counts_every_requester() -> None:
    runs = [run(i, hours_ago=1, who=f"user{i}", cost=5.0) for i in range(4)]
    assert check(runs, Limits(daily_budget_usd=20.0), who="newcomer") is not None


def test_a_run_not_written_up_counts_as_a_run_with_no_spend_yet() -> None:
    runs = [RunRecord("job-1", NOW - timedelta(hours=1), "alice", "a/w", None)]
    assert check(runs, Limits(daily_budget_usd=0.5, runs_per_requester=None)) is None
    assert check(runs, Limits(daily_budget_usd=None, runs_per_requester=1)) is not None


def test_limits_set_to_none_are_off() -> None:
    runs = [run(i, hours_ago=1, cost=100.0) for i in range(100)]
    off = Limits(
        daily_budget_usd=None,
        runs_per_requester=None,
        requester_budget_usd=None,
        runs_per_repository=None,
    )
    assert not off.counts_runs
    assert check(runs, off) is None


def test_a_limit_of_zero_refuses_and_never_resets() -> None:
    found = check([], Limits(runs_per_requester=0))
    assert found is not None and found.resets_at is None
    assert "never resets" in found.sentence()


def test_window_can_be_shorter_than_a_day() -> None:
    runs = [run(i, hours_ago=2 + i) for i in range(3)]
    limits = Limits(runs_per_requester=3, usage_window_hours=1.0)
    assert check(runs, limits) is None


# --------------------------------------------------------------------------- per requester spend

ONLY_MONEY = Limits(
    daily_budget_usd=None,
    runs_per_requester=None,
    requester_budget_usd=8.0,
    runs_per_repository=None,
)


def in_flight(n: int, *, budget: float, cost: float = 0.0, who: str = "alice") -> RunRecord:
    return RunRecord(f"job-{n}", NOW - timedelta(minutes=n), who, "a/w", cost, budget_usd=budget)


def test_a_run_in_flight_holds_its_whole_budget_an_ended_one_what_it_spent() -> None:
    assert held(in_flight(1, budget=5.0, cost=1.0)) == 5.0
    assert held(in_flight(1, budget=5.0, cost=6.0)) == 6.0  # past its budget by a last answer
    ended = RunRecord("j", NOW, "alice", "a/w", 1.25, budget_usd=5.0, finished=True)
    assert held(ended) == 1.25
    # A run whose budget nobody wrote down (before budgets were recorded) holds its spend.
    assert held(RunRecord("j", NOW, "alice", "a/w", 0.5)) == 0.5


def test_requester_budget_reserves_each_run_in_flight_so_a_third_cannot_start() -> None:
    first = in_flight(1, budget=5.0)
    left = requester_left([first], jobid="job-2", requester="alice", now=NOW, limits=ONLY_MONEY)
    assert left == 3.0  # the second run may start, with at most $3
    second = in_flight(2, budget=3.0)
    found = check([first, second], ONLY_MONEY)
    assert found is not None and found.limit == "requester_budget_usd"
    assert found.used == "$8.00" and found.allowed == "$8.00" and found.scope == "requester alice"
    assert "`limits.requester_budget_usd` is reached for requester alice" in found.sentence()
    # Another login's runs hold nothing of alice's.
    assert check([first, second], ONLY_MONEY, who="bob") is None
    # A re-delivery of a job already counted is let through (its claim decides).
    assert check([first, second], ONLY_MONEY, jobid="job-2") is None


def test_requester_budget_frees_what_an_ended_run_did_not_spend() -> None:
    ended = RunRecord(
        "job-1", NOW - timedelta(hours=2), "alice", "a/w", 1.0, budget_usd=5.0, finished=True
    )
    second = in_flight(2, budget=3.0)
    assert check([ended, second], ONLY_MONEY) is None
    left = requester_left(
        [ended, second], jobid="new", requester="alice", now=NOW, limits=ONLY_MONEY
    )
    assert left == 4.0


def test_requester_budget_refuses_a_remainder_too_small_for_a_run_and_says_when_it_resets() -> None:
    old = RunRecord("job-1", NOW - timedelta(hours=20), "alice", "a/w", 7.95, finished=True)
    found = check([old], ONLY_MONEY)
    assert found is not None and found.limit == "requester_budget_usd"
    assert MIN_RUN_BUDGET_USD > 8.0 - 7.95
    assert found.resets_at == old.started_at + timedelta(hours=24)
    zero = Limits(requester_budget_usd=0.0)
    refused = check([], zero)
    assert refused is not None and refused.resets_at is None


def test_requester_budget_off_leaves_nothing_to_count() -> None:
    off = Limits(requester_budget_usd=None)
    assert (
        requester_left(
            [in_flight(1, budget=500.0)], jobid="x", requester="alice", now=NOW, limits=off
        )
        is None
    )
