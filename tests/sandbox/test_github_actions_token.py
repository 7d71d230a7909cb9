"""The local GitHub's GITHUB_TOKEN: an installation token for one repository with
the job's permissions; no user, no scopes header, no writes elsewhere."""

from __future__ import annotations

from typing import Any

import requests

CONTROL = "alice/tusk-control"


def scenario(contents: str) -> dict[str, Any]:
    return {
        "users": [{"login": "alice"}, {"login": "github-actions[bot]"}],
        "tokens": {
            "actions": {
                "user": "github-actions[bot]",
                "repository": CONTROL,
                "permissions": {"contents": contents},
            }
        },
        "repos": [
            {"name": CONTROL, "private": True},
            {"name": "alice/other", "private": True},
            {"name": "alice/public"},
        ],
    }


def call(local_github: Any, method: str, path: str, **body: Any) -> requests.Response:
    return requests.request(
        method,
        local_github.url + path,
        headers={"Authorization": "Bearer actions"},
        json=body or None,
        timeout=30,
    )


def test_contents_write_dispatches_to_its_own_repository_only(local_github: Any) -> None:
    local_github.load(scenario("write"))
    own = call(local_github, "POST", f"/repos/{CONTROL}/dispatches", event_type="tusk-shard")
    assert own.status_code == 204
    assert "X-OAuth-Scopes" not in own.headers  # not a classic token
    assert [d["token"] for d in local_github.dispatches()] == ["actions"]
    other = call(local_github, "POST", "/repos/alice/other/dispatches", event_type="x")
    assert other.status_code == 404  # a private repository it cannot see
    public = call(local_github, "POST", "/repos/alice/public/dispatches", event_type="x")
    assert public.status_code == 403
    assert call(local_github, "GET", "/repos/alice/public").status_code == 200


def test_contents_read_cannot_dispatch_and_no_token_is_a_user(local_github: Any) -> None:
    local_github.load(scenario("read"))
    refused = call(local_github, "POST", f"/repos/{CONTROL}/dispatches", event_type="tusk-shard")
    assert refused.status_code == 403
    assert refused.json()["message"] == "Resource not accessible by integration"
    assert call(local_github, "GET", "/user").status_code == 403
    assert local_github.dispatches() == []
