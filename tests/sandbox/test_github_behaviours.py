"""The local GitHub answers as GitHub would where Tusk depends on it, and refuses
what GitHub's description does not allow."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from tusk.github.gateway import Forbidden, GitHubError, ValidationFailed


@pytest.fixture
def gh(local_github: Any, base_scenario: dict[str, Any]) -> Any:
    local_github.load(base_scenario)
    return local_github


def _raw(
    gh: Any, method: str, path: str, token: str | None = "alice", **kwargs: Any
) -> requests.Response:
    headers = {"Authorization": f"token {token}"} if token else {}
    headers.update(kwargs.pop("headers", {}))
    return requests.request(method, gh.url + path, headers=headers, timeout=10, **kwargs)


def test_undocumented_path_is_a_spec_violation(gh: Any) -> None:
    response = _raw(gh, "GET", "/repos/alice/widgets/frobnicate")
    assert response.status_code == 500
    assert response.json()["message"].startswith("sandbox spec violation:")
    assert [v["kind"] for v in gh.take_violations()] == ["request"]


def test_undocumented_body_field_is_a_spec_violation(gh: Any) -> None:
    response = _raw(
        gh, "PATCH", "/repos/alice/widgets/issues/1", json={"state": "closed", "reason": "done"}
    )
    assert response.status_code == 500
    assert "body field 'reason' is not documented" in response.json()["message"]
    gh.take_violations()


def test_invalid_enum_in_body_is_a_spec_violation(gh: Any) -> None:
    response = _raw(gh, "PATCH", "/repos/alice/widgets/issues/1", json={"state": "shut"})
    assert response.status_code == 500 and "'shut' is not one of" in response.json()["message"]
    gh.take_violations()


def test_read_only_token_cannot_write(gh: Any) -> None:
    with pytest.raises(Forbidden):
        gh.gateway("bot-read").post("/repos/alice/widgets/issues/1/comments", {"body": "hi"})


def test_read_only_token_may_post_only_the_pollers_answer_over_a_limit(gh: Any) -> None:
    """Tusk's own read-only discipline: the poller's one comment opens with its marker."""
    bot = gh.gateway("bot-read")
    answer = '<!-- tusk:limit {"jobid":"j"} -->\nNot started.'
    assert bot.post("/repos/alice/widgets/issues/1/comments", {"body": answer}).status == 201
    with pytest.raises(Forbidden):
        bot.post("/repos/alice/widgets/issues/1/comments", {"body": f"hi\n{answer}"})


def test_body_longer_than_65536_characters_is_refused(gh: Any) -> None:
    gateway = gh.gateway("alice")
    gateway.post("/repos/alice/widgets/issues/1/comments", {"body": "x" * 65_536})
    with pytest.raises(ValidationFailed) as refused:
        gateway.post("/repos/alice/widgets/issues/1/comments", {"body": "x" * 65_537})
    assert refused.value.status == 422
    assert "maximum is 65536" in refused.value.errors[0]["message"]


def test_the_2501st_comment_is_refused(gh: Any, base_scenario: dict[str, Any]) -> None:
    issue = base_scenario["repos"][0]["issues"][0]
    issue["comments"] = [{"author": "bob", "body": f"c{i}"} for i in range(2_500)]
    gh.load(base_scenario)
    with pytest.raises(Forbidden) as refused:
        gh.gateway("alice").post("/repos/alice/widgets/issues/1/comments", {"body": "one more"})
    assert "more than 2500 comments" in refused.value.github_message


def test_conditional_notifications_request_is_304_and_not_counted(gh: Any) -> None:
    gateway = gh.gateway("bot-read")
    first = gateway.conditional_get("/notifications")
    assert first.status == 200 and first.header("x-poll-interval") == "60"
    used = int(first.header("x-ratelimit-used"))
    again = gateway.conditional_get(
        "/notifications", if_modified_since=first.header("last-modified")
    )
    assert again.status == 304
    assert int(again.header("x-ratelimit-used")) == used
    gh.gateway("alice").post("/repos/alice/widgets/issues/1/comments", {"body": "@tusk-bot again"})
    changed = gateway.conditional_get(
        "/notifications", if_modified_since=first.header("last-modified")
    )
    assert changed.status == 200


def test_mention_reason_is_sticky_and_last_read_at_is_set(gh: Any) -> None:
    bot = gh.gateway("bot-read")
    thread = next(t for t in bot.get("/notifications") if t["subject"]["title"] == "Typo in README")
    assert thread["last_read_at"] is None
    bot.patch(f"/notifications/threads/{thread['id']}")
    gh.gateway("alice").post("/repos/alice/widgets/issues/1/comments", {"body": "no mention here"})
    again = bot.get(f"/notifications/threads/{thread['id']}")
    assert (again["reason"], again["unread"]) == ("mention", True)
    assert again["last_read_at"] is not None


def test_mentions_inside_code_do_not_notify(gh: Any) -> None:
    gh.gateway("alice").post(
        "/repos/alice/widgets/issues", {"title": "T", "body": "`@bob` and\n```\n@bob\n```"}
    )
    assert "T" not in {t["subject"]["title"] for t in gh.gateway("bob").get("/notifications")}


def test_labels_from_a_caller_without_push_are_dropped(gh: Any) -> None:
    created = gh.gateway("agent").post(
        "/repos/alice/widgets/issues", {"title": "T", "labels": ["bug"]}
    )
    assert created.body["labels"] == []
    by_owner = gh.gateway("alice").post(
        "/repos/alice/widgets/issues", {"title": "T", "labels": ["bug"]}
    )
    assert [label["name"] for label in by_owner.body["labels"]] == ["bug"]


def test_deleting_a_repository_needs_delete_repo(gh: Any) -> None:
    with pytest.raises(Forbidden):
        gh.gateway("agent-no-delete").delete("/repos/tusk-bot/widgets")
    assert gh.gateway("agent").delete("/repos/tusk-bot/widgets").status == 204


def test_dispatch_payload_limits(gh: Any) -> None:
    gateway = gh.gateway("alice")
    too_many = {f"k{i}": i for i in range(11)}
    response = _raw(
        gh,
        "POST",
        "/repos/alice/tusk-control/dispatches",
        json={"event_type": "e", "client_payload": too_many},
    )
    assert response.status_code == 500  # maxProperties 10 is in the description
    gh.take_violations()
    with pytest.raises(ValidationFailed):
        gateway.post(
            "/repos/alice/tusk-control/dispatches",
            {"event_type": "e", "client_payload": {"d": "x" * 70_000}},
        )
    assert gh.dispatches() == []


def test_link_pagination(gh: Any) -> None:
    gateway = gh.gateway("alice")
    for index in range(5):
        gateway.post("/repos/alice/widgets/issues/1/comments", {"body": f"c{index}"})
    first = gateway.request("GET", "/repos/alice/widgets/issues/1/comments", params={"per_page": 2})
    assert len(first.body) == 2 and 'rel="next"' in first.header("link")
    assert len(list(gateway.paginate("/repos/alice/widgets/issues/1/comments", per_page=2))) == 6


def test_unknown_token_is_401(gh: Any) -> None:
    assert _raw(gh, "GET", "/user", token="nobody").status_code == 401


def test_private_repository_is_404_for_strangers(gh: Any) -> None:
    assert _raw(gh, "GET", "/repos/alice/tusk-control", token="bob").status_code == 404


def test_status_fault_with_retry_after_is_retried_by_the_gateway(gh: Any) -> None:
    gh.add_fault(
        "GET", r"^/repos/alice/widgets$", status=429, count=1, headers={"Retry-After": "7"}
    )
    assert gh.gateway("alice").get("/repos/alice/widgets")["name"] == "widgets"
    assert gh.sleeps == [7.0]
    assert [e["status"] for e in gh.journal()] == [429, 200]


def test_secondary_limit_fault_says_so(gh: Any) -> None:
    gh.add_fault("POST", r"/comments$", status=403, count=None)
    with pytest.raises(GitHubError) as failed:
        gh.gateway("alice", max_attempts=2).post(
            "/repos/alice/widgets/issues/1/comments", {"body": "x"}
        )
    assert "secondary rate limit" in failed.value.github_message


def test_dropped_connection_fault(gh: Any) -> None:
    gh.add_fault("*", r"^/user$", drop=True, count=1)
    with pytest.raises(requests.ConnectionError):
        _raw(gh, "GET", "/user")
    assert _raw(gh, "GET", "/user").status_code == 200


def test_latency_fault_delays_the_answer(gh: Any) -> None:
    gh.add_fault("GET", r"^/user$", delay=0.05, count=1)
    response = _raw(gh, "GET", "/user")
    assert response.status_code == 200 and response.elapsed.total_seconds() >= 0.05


def _comment_count(gh: Any) -> int:
    return len(gh.gateway("alice").get("/repos/alice/widgets/issues/1/comments"))


def test_a_fault_that_lands_applies_the_write_and_loses_the_502(gh: Any) -> None:
    before = _comment_count(gh)
    gh.add_fault("POST", r"/issues/1/comments$", status=502, lands=True)
    response = _raw(gh, "POST", "/repos/alice/widgets/issues/1/comments", json={"body": "once"})
    assert response.status_code == 502
    assert _comment_count(gh) == before + 1
    entry = [e for e in gh.journal() if e["method"] == "POST"][-1]
    assert (entry["status"], entry["applied_status"]) == (502, 201)


def test_a_fault_that_lands_can_reset_the_connection_after_the_write(gh: Any) -> None:
    before = _comment_count(gh)
    gh.add_fault("POST", r"/issues/1/comments$", drop=True, lands=True)
    with pytest.raises(requests.ConnectionError):
        _raw(gh, "POST", "/repos/alice/widgets/issues/1/comments", json={"body": "once"})
    assert _comment_count(gh) == before + 1


def test_a_slow_answer_past_the_client_timeout_still_lands(gh: Any) -> None:
    before = _comment_count(gh)
    gh.add_fault("POST", r"/issues/1/comments$", delay=0.5, lands=True)
    with pytest.raises(requests.Timeout):
        requests.post(
            gh.url + "/repos/alice/widgets/issues/1/comments",
            headers={"Authorization": "token alice"},
            json={"body": "late"},
            timeout=0.1,
        )
    assert _comment_count(gh) == before + 1  # landed before the answer was due


def test_a_fault_can_pick_one_graphql_operation_by_its_body(gh: Any) -> None:
    gh.add_fault("POST", r"^/graphql$", status=502, body="mutation", count=None)
    gateway = gh.gateway("alice", max_attempts=1)
    assert gateway.graphql("query { viewer { login } }") == {"viewer": {"login": "alice"}}
    with pytest.raises(GitHubError) as failed:
        gateway.graphql('mutation { addStar(input: {starrableId: "x"}) { clientMutationId } }')
    assert failed.value.status == 502


def test_an_ordinary_fault_is_not_applied(gh: Any) -> None:
    before = _comment_count(gh)
    gh.add_fault("POST", r"/issues/1/comments$", status=502)
    response = _raw(gh, "POST", "/repos/alice/widgets/issues/1/comments", json={"body": "no"})
    assert response.status_code == 502 and _comment_count(gh) == before


def test_journal_records_token_status_and_body(gh: Any) -> None:
    gh.gateway("alice").post("/repos/alice/widgets/issues/1/comments", {"body": "logged"})
    entry = gh.journal()[-1]
    assert (entry["method"], entry["path"], entry["token"], entry["status"]) == (
        "POST",
        "/repos/alice/widgets/issues/1/comments",
        "alice",
        201,
    )
    assert entry["body"] == {"body": "logged"}


def test_etag_conditional_get_is_304_and_not_counted(gh: Any) -> None:
    gateway = gh.gateway("alice")
    first = gateway.conditional_get("/repos/alice/widgets/issues/1")
    used = int(first.header("x-ratelimit-used"))
    again = gateway.conditional_get("/repos/alice/widgets/issues/1", etag=first.header("etag"))
    assert again.status == 304 and int(again.header("x-ratelimit-used")) == used
    gh.gateway("bob").post("/repos/alice/widgets/issues/1/comments", {"body": "changes it"})
    assert (
        gateway.conditional_get("/repos/alice/widgets/issues/1", etag=first.header("etag")).status
        == 200
    )


def test_fork_can_be_made_asynchronous(gh: Any, base_scenario: dict[str, Any]) -> None:
    gh.load({**base_scenario, "settings": {"fork_ready_after_reads": 2}})
    gateway = gh.gateway("bob")
    created = gateway.post("/repos/alice/widgets/forks", {})
    assert created.status == 202 and created.body["full_name"] == "bob/widgets"
    statuses = [
        gateway.request("GET", "/repos/bob/widgets", allow_statuses=(404,)).status for _ in range(3)
    ]
    assert statuses == [404, 404, 200]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/repos/alice/widgets/issues"),
        ("PATCH", "/repos/alice/widgets/issues/1"),
        ("PATCH", "/repos/alice/widgets/pulls/2"),
    ],
)
def test_title_longer_than_256_characters_is_refused(gh: Any, method: str, path: str) -> None:
    gateway = gh.gateway("alice")
    gateway.request(method, path, json={"title": "t" * 256})
    with pytest.raises(ValidationFailed) as refused:
        gateway.request(method, path, json={"title": "t" * 257, "body": "b"})
    assert "maximum is 256" in refused.value.errors[0]["message"]


def test_refused_update_changes_nothing(gh: Any) -> None:
    with pytest.raises(ValidationFailed):
        gh.gateway("alice").patch(
            "/repos/alice/widgets/issues/1", {"title": "New title", "body": "x" * 65_537}
        )
    assert gh.gateway("alice").get("/repos/alice/widgets/issues/1")["title"] == "Typo in README"


def test_search_past_its_rate_limit_is_refused_and_rate_limit_is_free(gh: Any) -> None:
    # Search allows 30 a minute; a minute boundary mid-loop only delays the refusal.
    answers = []
    while len(answers) < 61 and (not answers or answers[-1].ok):
        answers.append(_raw(gh, "GET", "/search/issues", params={"q": "repo:alice/widgets"}))
    refused = answers[-1]
    assert refused.status_code == 403 and len(answers) >= 31
    assert refused.json()["message"].startswith("API rate limit exceeded")
    assert refused.headers["x-ratelimit-remaining"] == "0"
    assert refused.headers["x-ratelimit-used"] == "30"  # the refusal is not counted
    before = _raw(gh, "GET", "/rate_limit").json()["resources"]["core"]["used"]
    after = _raw(gh, "GET", "/rate_limit").json()["resources"]["core"]["used"]
    assert before == after == 0  # GitHub does not count /rate_limit itself


def test_documented_operation_without_a_handler_fails_the_test(gh: Any) -> None:
    # A caller that shrugs off errors must not pass against a stub answer.
    response = _raw(gh, "GET", "/repos/alice/widgets/topics")
    assert response.status_code == 500
    assert "does not implement repos/get-all-topics" in response.json()["message"]
    assert [v["kind"] for v in gh.take_violations()] == ["unimplemented"]


def test_time_a_test_lets_pass_moves_a_scenarios_own_clock(
    local_github: Any, base_scenario: dict[str, Any]
) -> None:
    """A scenario with a fixed start keeps time of its own; time a test lets pass (the
    admin clock, injected sleeps) moves its Date header and later timestamps too."""
    from email.utils import parsedate_to_datetime

    from tusk.sandbox.world_clock import parse_time

    gh = local_github
    gh.load({**base_scenario, "now": "2026-01-01T00:00:00Z"})

    def date() -> Any:
        return parsedate_to_datetime(_raw(gh, "GET", "/repos/alice/widgets").headers["Date"])

    gateway = gh.gateway("alice")
    before = parse_time(
        gateway.post("/repos/alice/widgets/issues/1/comments", {"body": "a"}).body["created_at"]
    )
    assert (date() - before).total_seconds() == 1  # one second after the latest change
    gh.advance(90)
    assert (date() - before).total_seconds() >= 90
    after = parse_time(
        gateway.post("/repos/alice/widgets/issues/1/comments", {"body": "b"}).body["created_at"]
    )
    assert (after - before).total_seconds() >= 90
