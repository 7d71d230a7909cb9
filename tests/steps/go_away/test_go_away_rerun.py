"""Go-away run again for one job finishes what is left: the advice its report gives
("run the go-away workflow again for this job") works."""

from __future__ import annotations

from typing import Any

import pytest
from go_away_world import BOT, CONTROL, request, scenario, settings

from tusk.steps.go_away import main
from tusk.steps.go_away.cleanup import RETRY
from tusk.text.markers import first_marker

STUCK = 505  # the bot's comment whose delete GitHub keeps failing


@pytest.fixture
def world(local_github: Any) -> Any:
    local_github.load(scenario())
    return local_github


def run(world: Any) -> int:
    return main.execute(
        request("bob"),
        gateway=world.gateway("agent"),
        settings=settings(),
        reaction="+1",
        sleep=[].append,
    )


def comment_ids(world: Any, name: str = "alice/widgets") -> set[int]:
    repo = world.state()["repos"][name]
    return {c["id"] for issue in repo["issues"].values() for c in issue["comments"]}


def go_away_logs(world: Any) -> list[dict[str, Any]]:
    issues = world.state()["repos"][CONTROL]["issues"].values()
    return [i for i in issues if "go away" in i["title"]]


def writes_since(world: Any, start: int) -> list[tuple[str, str]]:
    return [(e["method"], e["path"]) for e in world.journal()[start:] if e["method"] != "GET"]


def test_the_reports_advice_to_run_again_finishes_what_was_left(world: Any) -> None:
    world.add_fault("DELETE", rf"/issues/comments/{STUCK}$", status=502, count=None)
    assert run(world) == 1
    assert STUCK in comment_ids(world)
    (log,) = go_away_logs(world)
    assert RETRY in log["body"]  # the advice, as the user reads it
    assert (log["state"], log["state_reason"]) == ("closed", "not_planned")

    world.clear_faults()
    assert run(world) == 0  # what the advice says: the same job, again

    assert STUCK not in comment_ids(world)
    assert 502 not in comment_ids(world)  # removed by the first run, not asked again
    (log,) = go_away_logs(world)  # the same log issue, no second one
    assert (log["state"], log["state_reason"]) == ("closed", "not_planned")
    again = log["comments"][-1]
    assert again["author"] == BOT
    assert again["body"].startswith("**Run again for this job**")
    assert "| `alice/widgets` |" in again["body"] and "None." in again["body"]
    record = first_marker(log["body"], "go-away")
    assert record is not None and record["failures"] == 0  # nothing is left now


def test_a_third_run_after_everything_was_done_does_nothing(world: Any) -> None:
    world.add_fault("DELETE", rf"/issues/comments/{STUCK}$", status=502, count=None)
    assert run(world) == 1
    world.clear_faults()
    assert run(world) == 0
    start = len(world.journal())
    assert run(world) == 0
    assert writes_since(world, start) == []


def test_a_run_again_while_the_first_is_still_working_does_nothing(
    world: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An open log issue is its run's, still at work: a second delivery leaves it alone."""
    seen: list[list[tuple[str, str]]] = []

    def second_delivery_before_the_first_records(*args: Any, **kwargs: Any) -> None:
        start = len(world.journal())
        assert run(world) == 0
        seen.append(writes_since(world, start))

    monkeypatch.setattr(main, "_record", second_delivery_before_the_first_records)
    run(world)
    assert seen == [[]]
