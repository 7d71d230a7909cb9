"""Behaviours of github.com that a real deployment meets and the local GitHub reproduces,
each checked against its source (named in the sandbox code next to it)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
import requests
from conftest import scenario

from tusk.github.gateway import Forbidden, GitHubError, RateLimited, ValidationFailed


@pytest.fixture
def gh(local_github: Any, base_scenario: dict[str, Any]) -> Any:
    local_github.load(base_scenario)
    return local_github


def test_permission_endpoint_needs_push_access(gh: Any) -> None:
    path = "/repos/alice/widgets/collaborators/bob/permission"
    assert gh.gateway("alice").get(path)["permission"] == "write"
    with pytest.raises(Forbidden) as refused:
        gh.gateway("agent").get(path)  # the bot cannot push to alice/widgets
    assert refused.value.github_message == "Must have push access to view collaborator permission."


# --------------------------------------------------------------------------- secondary limits


def _raw(gh: Any, method: str, path: str, token: str = "alice", **kwargs: Any) -> Any:
    headers = {"Authorization": f"token {token}", **kwargs.pop("headers", {})}
    return requests.request(method, gh.url + path, headers=headers, timeout=10, **kwargs)


def _limited(local_github: Any, **limits: Any) -> Any:
    local_github.load(scenario(settings={"secondary_limits": limits}))
    return local_github


COMMENTS = "/repos/alice/widgets/issues/1/comments"


def test_content_creation_past_the_minute_limit_is_403_with_retry_after(
    local_github: Any,
) -> None:
    gh = _limited(local_github, content_per_minute=3)
    for n in range(3):
        assert _raw(gh, "POST", COMMENTS, json={"body": f"n{n}"}).status_code == 201
    refused = _raw(gh, "POST", COMMENTS, json={"body": "one too many"})
    assert refused.status_code == 403
    assert "temporarily blocked from content creation" in refused.json()["message"]
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    assert _raw(gh, "GET", COMMENTS).status_code == 200  # reads are not content
    # Another user is not affected: the limit is per user.
    assert _raw(gh, "POST", COMMENTS, token="bob", json={"body": "bob"}).status_code == 201
    gh.advance(int(refused.headers["retry-after"]))
    assert _raw(gh, "POST", COMMENTS, json={"body": "later"}).status_code == 201


def test_content_creation_past_the_hour_limit_waits_for_the_hour(local_github: Any) -> None:
    gh = _limited(local_github, content_per_minute=100, content_per_hour=4)
    for n in range(4):
        assert _raw(gh, "POST", COMMENTS, json={"body": f"n{n}"}).status_code == 201
        gh.advance(61)
    refused = _raw(gh, "POST", COMMENTS, json={"body": "one too many"})
    assert refused.status_code == 403
    assert 3600 - 4 * 61 - 2 <= int(refused.headers["retry-after"]) <= 3600


def test_the_gateway_survives_a_content_limit_by_waiting_what_github_says(
    local_github: Any,
) -> None:
    gh = _limited(local_github, content_per_minute=2)
    gateway = gh.gateway("alice")
    for n in range(3):  # the third waits out the minute
        gateway.post(COMMENTS, {"body": f"n{n}"}, may_repeat=False)
    assert len(gh.sleeps) == 1 and 1 <= gh.sleeps[0] <= 60
    bodies = [c["body"] for c in gateway.get(COMMENTS)]
    assert bodies.count("n2") == 1  # written once, not repeated


def test_tusks_gateway_paces_a_burst_under_the_default_limits(gh: Any) -> None:
    """120 comments in a row: the stand-in (80 a minute, on by default) never refuses one."""
    gateway = gh.gateway("alice")
    for n in range(120):
        gateway.post(COMMENTS, {"body": f"n{n}"}, may_repeat=False)
    statuses = {e["status"] for e in gh.journal() if e["method"] == "POST"}
    assert statuses == {201}
    # 20 at once, then one every 1.2 s: 100 x 1.2 s.
    assert sum(gh.sleeps) == pytest.approx(120.0, abs=5)


def test_rest_points_past_the_minute_budget_are_429(local_github: Any) -> None:
    gh = _limited(local_github, rest_points_per_minute=12)
    assert _raw(gh, "POST", COMMENTS, json={"body": "5 points"}).status_code == 201
    for _ in range(7):
        assert _raw(gh, "GET", "/repos/alice/widgets").status_code == 200
    refused = _raw(gh, "GET", "/repos/alice/widgets")
    assert refused.status_code == 429 and "secondary rate limit" in refused.json()["message"]
    assert int(refused.headers["retry-after"]) >= 1


def test_graphql_points_past_the_minute_budget_are_403(local_github: Any) -> None:
    gh = _limited(local_github, graphql_points_per_minute=3)
    query = {"query": "query { viewer { login } }"}
    for _ in range(3):
        assert _raw(gh, "POST", "/graphql", json=query).status_code == 200
    refused = _raw(gh, "POST", "/graphql", json=query)
    assert refused.status_code == 403 and "retry-after" in refused.headers


def test_concurrent_requests_past_the_limit_are_refused(local_github: Any) -> None:
    gh = _limited(local_github, concurrent=1)
    gh.add_fault("GET", r"^/repos/alice/widgets$", delay=0.5)
    slow = threading.Thread(target=_raw, args=(gh, "GET", "/repos/alice/widgets"))
    slow.start()
    time.sleep(0.2)  # the slow request is in flight (a real overlap is what is tested)
    try:
        assert _raw(gh, "GET", "/repos/alice/widgets/issues/1").status_code == 403
    finally:
        slow.join()
    assert _raw(gh, "GET", "/repos/alice/widgets/issues/1").status_code == 200


def test_secondary_limits_are_on_by_default_and_a_scenario_may_turn_them_off(
    local_github: Any,
) -> None:
    local_github.load(scenario())
    statuses = [
        _raw(local_github, "POST", COMMENTS, json={"body": f"n{n}"}).status_code for n in range(81)
    ]
    assert statuses == [201] * 80 + [403]
    local_github.load(scenario(settings={"secondary_limits": False}))
    statuses = [
        _raw(local_github, "POST", COMMENTS, json={"body": f"n{n}"}).status_code for n in range(81)
    ]
    assert statuses == [201] * 81


def test_a_misspelt_limit_in_a_scenario_is_refused_with_its_path(local_github: Any) -> None:
    with pytest.raises(AssertionError, match=r"settings.secondary_limits.per_minute: unknown key"):
        local_github.load(scenario(settings={"secondary_limits": {"per_minute": 3}}))


# --------------------------------------------------------------------------- GraphQL limits

COSTLY = """
query {
  repository(owner: "alice", name: "widgets") {
    pullRequests(first: 100) { nodes { reviews(first: 100) { nodes { comments(first: 1) {
      totalCount } } } } }
  }
  rateLimit { cost nodeCount remaining used }
}
"""


def test_graphql_cost_is_connections_over_100_and_nodes_multiply(gh: Any) -> None:
    cheap = gh.gateway("alice").graphql(
        """query { repository(owner: "alice", name: "widgets") {
             issues(first: 100) { nodes { labels(first: 10) { totalCount } } }
             pullRequests(first: 100) { nodes { labels(first: 10) { totalCount } } } }
           rateLimit { cost nodeCount remaining } }"""
    )
    # 1 + 100 + 1 + 100 connection requests = 202 -> 2 points; 100 + 1,000 nodes twice.
    assert cheap["rateLimit"] == {"cost": 2, "nodeCount": 2200, "remaining": 4998}
    costly = gh.gateway("alice").graphql(COSTLY)["rateLimit"]
    # 1 + 100 + 10,000 requests -> 101 points; 100 + 10,000 + 10,000 x 1 nodes.
    assert costly == {"cost": 101, "nodeCount": 20100, "remaining": 4897, "used": 103}


def test_graphql_over_500000_nodes_is_refused_before_it_runs_at_no_cost(gh: Any) -> None:
    query = """query { viewer { repositories(first: 100) { nodes { issues(first: 100) {
                 nodes { comments(first: 100) { totalCount } } } } } } }"""
    response = _raw(gh, "POST", "/graphql", json={"query": query})
    assert response.status_code == 200
    (error,) = response.json()["errors"]
    assert error["type"] == "MAX_NODE_LIMIT_EXCEEDED" and "1,010,100" in error["message"]
    assert response.headers["x-ratelimit-used"] == "0"
    with pytest.raises(GitHubError, match=r"maximum of 500,000"):
        gh.gateway("alice").graphql(query)


def test_graphql_past_its_hourly_points_is_rate_limited_inside_a_200(gh: Any) -> None:
    for _ in range(49):
        _raw(gh, "POST", "/graphql", json={"query": COSTLY})  # 49 x 101 = 4,949 points
    response = _raw(gh, "POST", "/graphql", json={"query": COSTLY})
    assert response.status_code == 200
    assert [e["type"] for e in response.json()["errors"]] == ["RATE_LIMITED"]
    assert response.headers["x-ratelimit-remaining"] == "51"


def test_the_gateway_waits_for_the_graphql_reset_and_tries_again(gh: Any) -> None:
    for _ in range(49):
        _raw(gh, "POST", "/graphql", json={"query": COSTLY})
    with pytest.raises(RateLimited):  # the hour's reset is further off than it may wait
        gh.gateway("alice", max_wait=0.5).graphql(COSTLY)
    data = gh.gateway("alice", max_wait=3601).graphql(COSTLY)
    assert data["rateLimit"]["cost"] == 101
    assert len(gh.sleeps) == 1 and 1 <= gh.sleeps[0] <= 3601


# --------------------------------------------------------------------------- forks, threads, lag


def test_fork_name_taken_by_an_unrelated_repository_becomes_name_1(local_github: Any) -> None:
    world = scenario()
    world["repos"] = [r for r in world["repos"] if r["name"] != "tusk-bot/widgets"]
    world["repos"].append({"name": "tusk-bot/widgets", "description": "the bot's own widgets"})
    local_github.load(world)
    agent = local_github.gateway("agent")
    created = agent.post("/repos/alice/widgets/forks", {})
    assert created.status == 202 and created.body["full_name"] == "tusk-bot/widgets-1"
    assert created.body["parent"]["full_name"] == "alice/widgets"
    again = agent.post("/repos/alice/widgets/forks", {})
    assert again.body["full_name"] == "tusk-bot/widgets-1"  # forking twice returns the fork
    assert agent.get("/repos/tusk-bot/widgets")["fork"] is False


def test_one_notification_thread_is_304_when_unchanged(gh: Any) -> None:
    bot = gh.gateway("bot-read")
    (thread,) = [
        t for t in bot.get("/notifications") if (t["subject"]["url"] or "").endswith("/issues/1")
    ]
    path = f"/notifications/threads/{thread['id']}"
    first = bot.conditional_get(path)
    assert first.status == 200 and first.header("last-modified")
    same = bot.conditional_get(path, if_modified_since=first.header("last-modified"))
    assert same.status == 304 and same.body is None
    gh.gateway("alice").post(COMMENTS, {"body": "@tusk-bot once more"})
    changed = bot.conditional_get(path, if_modified_since=first.header("last-modified"))
    assert changed.status == 200


def test_event_type_over_100_characters_is_422_not_a_violation(gh: Any) -> None:
    dispatch = gh.gateway("alice")
    path = "/repos/alice/tusk-control/dispatches"
    assert dispatch.post(path, {"event_type": "x" * 100}).status == 204
    with pytest.raises(ValidationFailed) as refused:
        dispatch.post(path, {"event_type": "x" * 101})
    assert refused.value.status == 422 and "event_type" in str(refused.value)
    assert gh.violations() == []


def test_listings_and_search_lag_a_new_issue_its_own_url_does_not(local_github: Any) -> None:
    local_github.load(scenario(settings={"listing_lag_seconds": 30}))
    alice = local_github.gateway("alice")
    created = alice.post("/repos/alice/widgets/issues", {"title": "fresh", "body": "new"}).body
    number = created["number"]
    assert alice.get(f"/repos/alice/widgets/issues/{number}")["title"] == "fresh"

    def listed() -> list[int]:
        return [i["number"] for i in alice.get("/repos/alice/widgets/issues")]

    def found() -> list[int]:
        return [i["number"] for i in alice.get("/search/issues", params={"q": "fresh"})["items"]]

    assert number not in listed() and number not in found()
    local_github.advance(30)
    assert number in listed() and number in found()


def test_comment_listings_lag_a_new_comment_its_own_url_does_not(local_github: Any) -> None:
    local_github.load(scenario(settings={"comment_listing_lag_seconds": 30}))
    alice = local_github.gateway("alice")
    created = alice.post("/repos/alice/widgets/issues/1/comments", {"body": "fresh"}).body
    assert alice.get(f"/repos/alice/widgets/issues/comments/{created['id']}")["body"] == "fresh"

    def listed() -> list[int]:
        on_issue = alice.get("/repos/alice/widgets/issues/1/comments")
        in_repo = alice.get("/repos/alice/widgets/issues/comments")
        return [c["id"] for c in on_issue] + [c["id"] for c in in_repo]

    assert created["id"] not in listed()
    local_github.advance(30)
    assert listed().count(created["id"]) == 2


# --------------------------------------------------------------------------- discussions


def test_a_users_discussion_comments_can_be_listed_and_deleted(gh: Any) -> None:
    alice = gh.gateway("alice")
    repo_id = alice.graphql('query { repository(owner: "alice", name: "widgets") { id } }')[
        "repository"
    ]["id"]
    query = """query($id: ID) { user(login: "alice") {
                 repositoryDiscussionComments(first: 100, repositoryId: $id) {
                   nodes { id body replies(first: 1) { totalCount } } } } }"""
    (comment,) = alice.graphql(query, {"id": repo_id})["user"]["repositoryDiscussionComments"][
        "nodes"
    ]
    assert comment["body"] == "More widgets" and comment["replies"]["totalCount"] == 1
    delete = """mutation($id: ID!) { deleteDiscussionComment(input: {id: $id}) {
                  comment { id } } }"""
    with pytest.raises(GitHubError, match="permission"):
        gh.gateway("agent").graphql(delete, {"id": comment["id"]})  # not the bot's to delete
    alice.graphql(delete, {"id": comment["id"]})
    # It had a reply, so it was wiped, not removed: the reply stays.
    (wiped,) = alice.graphql(query, {"id": repo_id})["user"]["repositoryDiscussionComments"][
        "nodes"
    ]
    assert wiped["body"] == "" and wiped["replies"]["totalCount"] == 1
