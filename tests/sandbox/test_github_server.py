"""The local GitHub as a process: the CLI entry point, concurrency, the admin API."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import requests

from tusk.sandbox.testing import run_local_github


def test_cli_prints_the_url_first_and_serves_the_scenario(base_scenario: dict[str, Any]) -> None:
    with run_local_github(base_scenario) as github:
        assert github.gateway("alice").get("/repos/alice/widgets")["full_name"] == "alice/widgets"
        assert github.violations() == []


def test_concurrent_requests_are_all_answered(
    local_github: Any, base_scenario: dict[str, Any]
) -> None:
    local_github.load(base_scenario)
    gateway = local_github.gateway("alice")

    def comment(index: int) -> int:
        return gateway.post("/repos/alice/widgets/issues/1/comments", {"body": f"c{index}"}).status

    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(comment, range(40)))
    assert statuses == [201] * 40
    comments = list(gateway.paginate("/repos/alice/widgets/issues/1/comments"))
    assert len({c["id"] for c in comments}) == 41


def test_the_admin_api_answers_only_the_holder_of_its_secret(local_github: Any) -> None:
    for headers in ({}, {"X-Tusk-Admin": "a-guess"}):
        response = requests.get(f"{local_github.url}/_sandbox/state", headers=headers, timeout=10)
        assert response.status_code == 401 and "X-Tusk-Admin" in response.json()["message"]
    assert "tokens" in local_github.state()  # the fixture holds the secret


def test_scenario_problems_come_back_over_the_admin_api(local_github: Any) -> None:
    response = requests.post(
        f"{local_github.url}/_sandbox/scenario",
        data=b"users: [{login: a, colour: red}]",
        headers=local_github.admin_headers,
        timeout=10,
    )
    assert response.status_code == 400
    assert response.json()["problems"] == [
        "users[0].colour: unknown key (known: email, id, login, members, name, type)"
    ]


def test_state_lists_what_requests_changed(
    local_github: Any, base_scenario: dict[str, Any]
) -> None:
    local_github.load(base_scenario)
    local_github.gateway("alice").post("/repos/alice/widgets/issues", {"title": "New"})
    state = local_github.state()
    titles = [i["title"] for i in state["repos"]["alice/widgets"]["issues"].values()]
    assert "New" in titles
    assert state["repos"]["alice/widgets"]["branches"]["main"]


def test_notifications_filters(local_github: Any, base_scenario: dict[str, Any]) -> None:
    local_github.load(base_scenario)
    bot = local_github.gateway("bot-read")
    threads = bot.get("/notifications")
    assert {t["reason"] for t in threads} == {"mention"}
    newest = max(t["updated_at"] for t in threads)
    assert all(
        t["updated_at"] < newest for t in bot.get("/notifications", params={"before": newest})
    )
    assert [t["updated_at"] for t in bot.get("/notifications", params={"since": newest})] == [
        newest
    ]
    assert len(bot.get("/notifications", params={"participating": "true"})) == len(threads)
    repo_threads = bot.get("/repos/alice/widgets/notifications")
    assert {t["repository"]["full_name"] for t in repo_threads} == {"alice/widgets"}


def test_notifications_per_page_is_capped_at_50(
    local_github: Any, base_scenario: dict[str, Any]
) -> None:
    issues = [{"author": "alice", "title": f"t{i}", "body": "@tusk-bot"} for i in range(60)]
    base_scenario["repos"][0]["issues"] = issues
    base_scenario["repos"][0]["pulls"] = []
    local_github.load(base_scenario)
    first = local_github.gateway("bot-read").request(
        "GET", "/notifications", params={"per_page": 50}
    )
    assert len(first.body) == 50 and 'rel="next"' in first.header("link")


def test_lenient_mode_answers_like_github_but_still_records(base_scenario: dict[str, Any]) -> None:
    from tusk.sandbox.github_server import start_server

    running = start_server(scenario=base_scenario, strict=False)
    try:
        response = requests.get(f"{running.url}/repos/alice/widgets/frobnicate", timeout=10)
        assert response.status_code == 404
        assert [v["kind"] for v in running.app.violations] == ["request"]
    finally:
        running.stop()


def test_anonymous_reads_public_data_only(local_github: Any, base_scenario: dict[str, Any]) -> None:
    local_github.load(base_scenario)
    anonymous = local_github.gateway(None)
    assert anonymous.get("/repos/alice/widgets")["private"] is False
    response = anonymous.request("GET", "/user", allow_statuses=(401,))
    assert response.status == 401
    limit = anonymous.request("GET", "/repos/alice/widgets").header("x-ratelimit-limit")
    assert limit == "60"


def test_a_scenario_in_json_with_an_escaped_astral_character_loads(
    local_github: Any, base_scenario: dict[str, Any]
) -> None:
    """``json.dumps`` writes 🤖 as the surrogate pair ``\\ud83e\\udd16``, which YAML refuses."""
    scenario = dict(base_scenario)
    scenario["repos"] = [
        {**repo, "issues": [{"number": 1, "author": "alice", "title": "🤖 t", "body": "🤖 b"}]}
        if repo["name"] == "alice/widgets"
        else repo
        for repo in base_scenario["repos"]
    ]
    text = json.dumps(scenario)
    assert "\\ud83e\\udd16" in text
    local_github.load(text)
    issue = local_github.gateway("alice").get("/repos/alice/widgets/issues/1")
    assert (issue["title"], issue["body"]) == ("🤖 t", "🤖 b")
