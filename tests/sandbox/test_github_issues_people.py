"""The local GitHub does to issues what people can do on GitHub: delete (GraphQL
``deleteIssue``, admins only; the URL then answers 410), transfer (GraphQL
``transferIssue``; the old URL answers 301 to the new one), and close (``closed_by``)."""

from __future__ import annotations

from typing import Any

import pytest

from tusk.github.gateway import GitHubError

WORLD: dict[str, Any] = {
    "users": [{"login": "alice"}, {"login": "carol"}, {"login": "tusk-bot"}],
    "tokens": {
        "alice": {"user": "alice", "scopes": ["repo"]},
        "carol": {"user": "carol", "scopes": ["repo"]},
        "bot": {"user": "tusk-bot", "scopes": ["repo"]},
    },
    "repos": [
        {
            "name": "alice/control",
            "collaborators": {"carol": "write", "tusk-bot": "write"},
            "issues": [
                {"number": 1, "author": "tusk-bot", "title": "one", "labels": ["workflow"]},
                {"number": 2, "author": "tusk-bot", "title": "two"},
            ],
        },
        {"name": "alice/archive", "collaborators": {"carol": "write", "tusk-bot": "read"}},
    ],
}
DELETE = "mutation($id: ID!) { deleteIssue(input: {issueId: $id}) { repository { name } } }"
TRANSFER = (
    "mutation($id: ID!, $to: ID!) { transferIssue(input: {issueId: $id, repositoryId: $to})"
    " { issue { number title } } }"
)


@pytest.fixture
def gh(local_github: Any) -> Any:
    local_github.load(WORLD)
    return local_github


def node(gh: Any, path: str) -> str:
    return str(gh.gateway("bot").get(path)["node_id"])


def test_an_admin_deletes_an_issue_and_its_url_answers_410(gh: Any) -> None:
    gateway = gh.gateway("alice")
    answer = gateway.graphql(DELETE, {"id": node(gh, "/repos/alice/control/issues/1")})
    assert answer["deleteIssue"]["repository"]["name"] == "control"
    gone = gh.gateway("bot").request("GET", "/repos/alice/control/issues/1", allow_statuses=(410,))
    assert gone.status == 410
    listed = gh.gateway("bot").get("/repos/alice/control/issues", params={"state": "all"})
    assert [i["number"] for i in listed] == [2]


def test_only_an_admin_may_delete_an_issue(gh: Any) -> None:
    with pytest.raises(GitHubError, match="permission"):
        gh.gateway("carol").graphql(DELETE, {"id": node(gh, "/repos/alice/control/issues/1")})
    assert gh.gateway("bot").get("/repos/alice/control/issues/1")["title"] == "one"


def test_a_transferred_issue_answers_301_at_its_old_url_and_lives_on_in_the_new_repo(
    gh: Any,
) -> None:
    moved = gh.gateway("carol").graphql(
        TRANSFER,
        {"id": node(gh, "/repos/alice/control/issues/2"), "to": node(gh, "/repos/alice/archive")},
    )
    assert moved["transferIssue"]["issue"] == {"number": 1, "title": "two"}
    old = gh.gateway("bot").request("GET", "/repos/alice/control/issues/2", follow_redirects=False)
    assert old.status == 301
    # GitHub names the new home by the repository's id, not its name.
    archive_id = gh.gateway("bot").get("/repos/alice/archive")["id"]
    assert (old.header("location") or "").endswith(f"/repositories/{archive_id}/issues/1")
    followed = gh.gateway("bot").get("/repos/alice/control/issues/2")  # clients follow it
    assert (followed["title"], followed["repository_url"].endswith("/alice/archive")) == (
        "two",
        True,
    )
    assert gh.take_violations() == []


def test_closing_records_who_closed_it_and_reopening_clears_it(gh: Any) -> None:
    carol = gh.gateway("carol")
    closed = carol.patch("/repos/alice/control/issues/1", json={"state": "closed"}).body
    assert closed["closed_by"]["login"] == "carol"
    reopened = carol.patch("/repos/alice/control/issues/1", json={"state": "open"}).body
    assert reopened["closed_by"] is None


def test_a_person_removes_a_label_and_edits_a_body(gh: Any) -> None:
    carol = gh.gateway("carol")
    carol.delete("/repos/alice/control/issues/1/labels/workflow")
    edited = carol.patch("/repos/alice/control/issues/1", json={"body": "edited"}).body
    assert (edited["labels"], edited["body"], edited["user"]["login"]) == ([], "edited", "tusk-bot")
