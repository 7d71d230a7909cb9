"""``@bot stop`` against the local GitHub (MISSION C2): verified from GitHub, it records
the stop on the log issue of the run in flight for its requester or a confirmed writer,
once; anyone else (a stranger, a read-only collaborator) gets one reply and nothing is
stopped; a thread with nothing in flight is told so once. The bot stays allowed."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from tusk.contracts.config import Settings
from tusk.contracts.models import StopRequest
from tusk.errors import UserError
from tusk.issues import stop_record
from tusk.issues.state import StateStore
from tusk.steps.stop.main import execute
from tusk.text.markers import parse_markers, render_marker

BOT = "tusk-bot"
REPO = "alice/widgets"
CONTROL = "ops/control"
SETTINGS = Settings(bot=BOT, control_repo=CONTROL, allowed_users=("alice", "bob"))
AT = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def world() -> dict[str, Any]:
    people = ("alice", "bob", "carol", "mallory")
    return {
        "users": [{"login": login} for login in (BOT, *people, "ops")],
        "tokens": {
            "agent": {"user": BOT, "scopes": ["repo"]},
            **{name: {"user": name, "scopes": ["repo"]} for name in people},
        },
        "repos": [
            {"name": CONTROL, "collaborators": {BOT: "write"}, "labels": ["workflow", "bug"]},
            {
                "name": REPO,
                "collaborators": {"bob": "write", "carol": "read", BOT: "write"},
                "issues": [{"number": 1, "author": "alice", "title": "Typo", "body": "x"}],
            },
        ],
    }


@pytest.fixture
def gh(local_github: Any) -> Any:
    local_github.load(world())
    return local_github


def run_in_flight(gh: Any, requester: str = "alice") -> dict[str, Any]:
    data = {"jobid": "job-1", "repo": REPO, "requester": requester, "thread": f"{REPO}#1"}
    return dict(
        gh.gateway("agent")
        .post(
            f"/repos/{CONTROL}/issues",
            json={
                "title": f"[Agent Log] {REPO} #1",
                "body": f"{render_marker('job', data)}\n# Task",
                "labels": ["workflow"],
            },
        )
        .body
    )


def ask(gh: Any, who: str, *, jobid: str = "stop-1", body: str = f"@{BOT} stop") -> StopRequest:
    made = gh.gateway(who).post(f"/repos/{REPO}/issues/1/comments", json={"body": body}).body
    return StopRequest(
        jobid=jobid,
        actor=who,
        repo=REPO,
        trust_level="external",
        comment_id=str(made["id"]),
        comment_url=made["html_url"],
        comment_type="issue_comment",
        timestamp=AT,
    )


def stops(gh: Any, log: dict[str, Any]) -> list[stop_record.StopRecord]:
    comments = gh.gateway("agent").paginate(f"/repos/{CONTROL}/issues/{log['number']}/comments")
    found = stop_record.stop_of(comments, bot=BOT)
    return [found] if found else []


def replies(gh: Any) -> list[str]:
    comments = gh.gateway("agent").paginate(f"/repos/{REPO}/issues/1/comments")
    return [c["body"] for c in comments if parse_markers(c["body"], "stop-reply")]


def test_the_requester_stops_the_run_in_flight_once(gh: Any) -> None:
    log = run_in_flight(gh)
    request = ask(gh, "alice")
    for _ in range(2):  # a re-delivery of the same request stops at its claim
        assert execute(request, gateway=gh.gateway("agent"), settings=SETTINGS) == 0
    [stop] = stops(gh, log)
    assert (stop.actor, stop.url) == ("alice", request.comment_url)
    assert "alice asked for this run" in stop.why
    assert replies(gh) == []  # the run's status comment says it; no reply needed
    blocklist = StateStore(gh.gateway("agent"), SETTINGS).read_blocklist()
    assert not blocklist.blocks(REPO) and not blocklist.blocks_user("alice")


def test_a_writer_who_did_not_ask_may_stop_it(gh: Any) -> None:
    log = run_in_flight(gh, requester="alice")
    execute(ask(gh, "bob"), gateway=gh.gateway("agent"), settings=SETTINGS)
    [stop] = stops(gh, log)
    assert stop.actor == "bob" and "write access" in stop.why


@pytest.mark.parametrize("who", ["mallory", "carol"])  # a stranger, a read-only collaborator
def test_anyone_else_is_refused_with_one_reply(gh: Any, who: str) -> None:
    log = run_in_flight(gh)
    request = ask(gh, who)
    for _ in range(2):
        execute(request, gateway=gh.gateway("agent"), settings=SETTINGS)
    assert stops(gh, log) == []
    [reply] = replies(gh)
    assert "Nothing was stopped" in reply and "requester, alice" in reply
    issues = gh.gateway("agent").paginate(f"/repos/{CONTROL}/issues", params={"state": "all"})
    [own] = [i for i in issues if i["title"].startswith("[Stop]")]
    assert (own["state"], own["state_reason"]) == ("closed", "not_planned")


def test_a_thread_with_nothing_in_flight_is_told_so_once(gh: Any) -> None:
    log = run_in_flight(gh)
    gh.gateway("agent").patch(f"/repos/{CONTROL}/issues/{log['number']}", json={"state": "closed"})
    request = ask(gh, "alice")
    for _ in range(2):
        execute(request, gateway=gh.gateway("agent"), settings=SETTINGS)
    [reply] = replies(gh)
    assert "nothing to stop" in reply
    assert stops(gh, log) == []


def test_a_request_whose_comment_does_not_say_stop_is_refused(gh: Any) -> None:
    log = run_in_flight(gh)
    request = ask(gh, "alice", body=f"@{BOT} keep going")
    with pytest.raises(UserError, match="does not say"):
        execute(request, gateway=gh.gateway("agent"), settings=SETTINGS)
    assert stops(gh, log) == []
