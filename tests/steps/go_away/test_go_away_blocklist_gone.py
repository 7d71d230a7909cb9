"""A blocklist issue that people deleted or transferred never reads as empty: it is
rebuilt from the go-away log issues (the bot's own records), or reading it stops with
a clear error. What the poller dispatches afterwards is checked end to end."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from go_away_world import BOT, CONTROL, request, scenario, settings

from tusk.contracts.models import GO_AWAY_EVENT_TYPE, GoAwayRequest
from tusk.issues.blocklist_codec import parse_blocklist_body
from tusk.issues.go_away_records import BlocklistGone
from tusk.issues.state import StateStore
from tusk.mcp.server.wiring import blocklist_watch
from tusk.poller.core import PollState
from tusk.poller.cycle import Poller
from tusk.steps.go_away import main

NOW = datetime(2026, 11, 30, 7, 0, tzinfo=UTC)
ARCHIVE = "ops/archive"


def poller(github: Any) -> Poller:
    store = StateStore(github.gateway("bot-read"), settings())
    return Poller(
        settings=settings(),
        bot=github.gateway("bot-read"),
        dispatcher=github.gateway("dispatch"),
        read_blocklist=store.read_blocklist,
        clock=lambda: NOW,
    )


def go_away(github: Any, go_request: GoAwayRequest) -> None:
    code = main.execute(
        go_request,
        gateway=github.gateway("agent"),
        settings=settings(),
        reaction="+1",
        sleep=lambda seconds: None,
    )
    assert code == 0


def issues(github: Any) -> dict[int, dict[str, Any]]:
    return {int(n): i for n, i in github.state()["repos"][CONTROL]["issues"].items()}


def blocklist_number(github: Any) -> int:
    (number,) = [n for n, i in issues(github).items() if i["title"] == "Tusk blocklist"]
    return number


def node(github: Any, path: str) -> str:
    return str(github.gateway("agent").get(path)["node_id"])


def delete(github: Any, number: int) -> None:
    github.gateway("dispatch").graphql(  # ops owns the control repository
        "mutation($id: ID!) { deleteIssue(input: {issueId: $id}) { clientMutationId } }",
        {"id": node(github, f"/repos/{CONTROL}/issues/{number}")},
    )


def transfer(github: Any, number: int) -> None:
    github.gateway("dispatch").graphql(
        "mutation($id: ID!, $to: ID!) { transferIssue(input: {issueId: $id, repositoryId: $to})"
        " { issue { number } } }",
        {
            "id": node(github, f"/repos/{CONTROL}/issues/{number}"),
            "to": node(github, f"/repos/{ARCHIVE}"),
        },
    )


@pytest.fixture
def blocked(local_github: Any) -> Any:
    """bob's "@bot go away" in alice/widgets, carried through the poller's dispatch."""
    world = scenario()
    world["repos"].append({"name": ARCHIVE, "collaborators": {BOT: "read"}})
    local_github.load(world)
    _, report = poller(local_github).cycle(PollState())
    assert report.errors == []
    (dispatch,) = [d for d in local_github.dispatches() if d["event_type"] == GO_AWAY_EVENT_TYPE]
    go_away(local_github, GoAwayRequest.model_validate(dispatch["client_payload"]))
    return local_github


def ask_again(github: Any) -> None:
    github.gateway("alice").post(
        "/repos/alice/widgets/issues/1/comments", json={"body": f"@{BOT} one more thing"}
    )


@pytest.mark.parametrize("gone", [delete, transfer], ids=["deleted", "transferred"])
def test_a_blocklist_issue_that_is_gone_still_blocks_and_the_poller_dispatches_nothing(
    blocked: Any, gone: Any
) -> None:
    before = StateStore(blocked.gateway("bot-read"), settings()).read_blocklist()
    gone(blocked, blocklist_number(blocked))
    assert not [i for i in issues(blocked).values() if i["title"] == "Tusk blocklist"]
    ask_again(blocked)
    shards = len(blocked.dispatches())

    _, report = poller(blocked).cycle(PollState())

    assert report.dispatched == [] and len(blocked.dispatches()) == shards
    assert any("alice/widgets is on the blocklist" in line for line in report.skipped)
    rebuilt = StateStore(blocked.gateway("bot-read"), settings()).read_blocklist()
    assert [e.repo for e in rebuilt.repos] == [e.repo for e in before.repos] == ["alice/widgets"]
    assert [e.user for e in rebuilt.users] == [e.user for e in before.users] == ["bob"]


def test_the_next_go_away_seeds_a_new_blocklist_issue_with_what_was_blocked(
    blocked: Any,
) -> None:
    delete(blocked, blocklist_number(blocked))
    said = blocked.gateway("carol").post(
        "/repos/alice/widgets/issues/1/comments", json={"body": f"@{BOT} go away"}
    )
    cid = str(said.body["id"])
    go_away(blocked, request("carol", cid, jobid=f"alice-widgets-ic-carol-{cid}"))
    body = issues(blocked)[blocklist_number(blocked)]["body"]
    written, _ = parse_blocklist_body(body)
    assert [e.repo for e in written.repos] == ["alice/widgets"]  # bob's, carried over
    assert sorted(e.user for e in written.users) == ["bob", "carol"]


def test_a_go_away_record_a_person_edited_away_stops_the_poller_with_a_clear_error(
    blocked: Any,
) -> None:
    (log,) = [n for n, i in issues(blocked).items() if "go away" in i["title"]]
    blocked.gateway("dispatch").patch(
        f"/repos/{CONTROL}/issues/{log}", json={"body": "# Go away\n"}
    )
    delete(blocked, blocklist_number(blocked))
    ask_again(blocked)
    shards = len(blocked.dispatches())
    with pytest.raises(BlocklistGone, match="The blocklist issue is gone") as stopped:
        StateStore(blocked.gateway("bot-read"), settings()).read_blocklist()
    assert "Nothing was assumed, least of all an empty blocklist" in stopped.value.hint
    with pytest.raises(BlocklistGone):
        poller(blocked).cycle(PollState())
    assert len(blocked.dispatches()) == shards


def test_the_mcp_servers_blocklist_still_blocks_when_its_issue_is_gone(blocked: Any) -> None:
    watch = blocklist_watch(settings(), blocked.gateway("bot-read"))
    assert watch.start().blocks("alice/widgets")
    delete(blocked, blocklist_number(blocked))
    watch.max_age = 0  # check again before the next write
    assert watch.current().blocks("alice/widgets")  # rebuilt, not emptied
    assert blocklist_watch(settings(), blocked.gateway("bot-read")).start().blocks("bob/tools")


def test_the_mcp_server_does_not_start_when_the_blocklist_cannot_be_rebuilt(
    blocked: Any,
) -> None:
    (log,) = [n for n, i in issues(blocked).items() if "go away" in i["title"]]
    blocked.gateway("dispatch").patch(f"/repos/{CONTROL}/issues/{log}", json={"body": "edited"})
    delete(blocked, blocklist_number(blocked))
    with pytest.raises(BlocklistGone, match="cannot rebuild it"):
        blocklist_watch(settings(), blocked.gateway("bot-read")).start()
