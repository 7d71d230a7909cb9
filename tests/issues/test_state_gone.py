"""History and memory issues that people deleted or transferred lose context, never
safety: readers find no entries, the next writer starts a new issue."""

from __future__ import annotations

from typing import Any

import pytest

from tusk.contracts.config import Settings
from tusk.issues.state import StateStore

CONTROL = "alice/tusk-control"
SETTINGS = Settings(bot="tusk-bot", control_repo=CONTROL, allowed_users=("alice",))
WORLD: dict[str, Any] = {
    "users": [{"login": "tusk-bot"}, {"login": "alice"}],
    "tokens": {
        "agent": {"user": "tusk-bot", "scopes": ["repo"]},
        "alice": {"user": "alice", "scopes": ["repo"]},
    },
    "repos": [
        {"name": CONTROL, "collaborators": {"tusk-bot": "write"}},
        {"name": "alice/archive", "collaborators": {"tusk-bot": "write"}},
    ],
}


def gone(github: Any, number: int, how: str) -> None:
    gateway = github.gateway("alice")  # alice owns both repositories
    issue = gateway.get(f"/repos/{CONTROL}/issues/{number}")["node_id"]
    if how == "deleted":
        query = "mutation($id: ID!) { deleteIssue(input: {issueId: $id}) { clientMutationId } }"
        gateway.graphql(query, {"id": issue})
        return
    to = gateway.get("/repos/alice/archive")["node_id"]
    query = (
        "mutation($id: ID!, $to: ID!) { transferIssue(input: {issueId: $id, repositoryId: $to})"
        " { issue { number } } }"
    )
    gateway.graphql(query, {"id": issue, "to": to})


@pytest.mark.parametrize("kind", ["history", "memory"])
@pytest.mark.parametrize("how", ["deleted", "transferred"])
def test_a_lost_history_or_memory_issue_loses_its_entries_and_a_new_one_starts(
    local_github: Any, kind: Any, how: str
) -> None:
    local_github.load(WORLD)
    store = StateStore(local_github.gateway("agent"), SETTINGS)
    store.append_entry(kind, "before", jobid="alice-widgets-1")
    first = store.state_issue(kind, create=False)
    assert first is not None
    gone(local_github, first.number, how)

    fresh = StateStore(local_github.gateway("agent"), SETTINGS)
    assert fresh.read_entries(kind) == []  # the context is lost, nothing fails
    fresh.append_entry(kind, "after", jobid="alice-widgets-2")
    assert [
        e.text for e in StateStore(local_github.gateway("agent"), SETTINGS).read_entries(kind)
    ] == ["after"]
