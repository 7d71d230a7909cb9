"""Where the local GitHub differed from recordings of the real one, and now answers as
GitHub did: each test names the recording (``@octokit/fixtures``) it follows."""

from __future__ import annotations

from typing import Any

import pytest

from tusk.github.gateway import GitHubError
from tusk.github.ledger import route_of

WORLD: dict[str, Any] = {
    "settings": {"page_size": 2},
    "users": [{"login": "alice"}, {"login": "bob"}, {"login": "tusk-bot"}],
    "tokens": {
        "alice": {"user": "alice", "scopes": ["repo", "notifications"]},
        "bob": {"user": "bob", "scopes": ["repo", "notifications"]},
    },
    "repos": [
        {
            "name": "alice/widgets",
            "id": 4242,
            "renamed_from": ["alice/gadgets"],
            "collaborators": {"bob": "write"},
            "files": {"README.md": "# Widgets\n"},
            "labels": [
                {"name": "bug", "color": "d73a4a", "default": True},
                {"name": "workflow", "color": "ededed"},
            ],
            "issues": [
                {
                    "number": n,
                    "author": "alice",
                    "title": f"issue {n}",
                    "body": "x",
                    "labels": ["bug"],
                }
                for n in range(1, 6)
            ],
        },
    ],
}


@pytest.fixture
def gh(local_github: Any) -> Any:
    local_github.load(WORLD)
    return local_github


# -- pages and redirects under /repositories/{id} (paginate-issues, rename-repository)


def test_pages_link_to_the_repository_by_id_in_githubs_rel_order(gh: Any) -> None:
    alice = gh.gateway("alice")
    second = alice.request("GET", "/repos/alice/widgets/issues", params={"page": 2})
    link = second.header("link") or ""
    rels = [part.split('rel="')[1].rstrip('"') for part in link.split(", ")]
    assert rels == ["prev", "next", "last", "first"]
    assert all("/repositories/4242/issues?" in part for part in link.split(", "))
    assert "/repositories/4242/issues?" in second.links["next"]
    assert "page=3" in second.links["next"]


def test_following_the_pages_reads_every_item_and_counts_one_route(gh: Any) -> None:
    alice = gh.gateway("alice")
    numbers = [i["number"] for i in alice.paginate("/repos/alice/widgets/issues")]
    assert sorted(numbers) == [1, 2, 3, 4, 5]
    assert alice.ledger.by_route == {"GET /repos/{owner}/{repo}/issues": 3}
    paths = [e["path"] for e in gh.journal() if e["method"] == "GET"]
    assert paths[-2:] == ["/repositories/4242/issues"] * 2
    routes = {e.get("route") for e in gh.journal() if e["method"] == "GET"}
    assert routes == {"/repos/alice/widgets/issues"}
    assert gh.take_violations() == []


def test_a_repository_id_nobody_has_is_not_found(gh: Any) -> None:
    with pytest.raises(GitHubError) as raised:
        gh.gateway("alice").get("/repositories/999999/issues")
    assert raised.value.status == 404


def test_a_renamed_repository_redirects_reads_301_and_writes_307_by_id(gh: Any) -> None:
    alice = gh.gateway("alice")
    read = alice.request("GET", "/repos/alice/gadgets/issues/1", follow_redirects=False)
    assert read.status == 301
    assert (read.header("location") or "").endswith("/repositories/4242/issues/1")
    assert read.body == {
        "message": "Moved Permanently",
        "url": read.header("location"),
        "documentation_url": read.body["documentation_url"],
    }
    write = alice.request(
        "POST",
        "/repos/alice/gadgets/issues/1/comments",
        json={"body": "hello"},
        follow_redirects=False,
    )
    assert write.status == 307
    assert (write.header("location") or "").endswith("/repositories/4242/issues/1/comments")


def test_a_followed_redirect_counts_both_requests_under_their_routes(gh: Any) -> None:
    alice = gh.gateway("alice")
    assert alice.get("/repos/alice/gadgets/issues/1")["title"] == "issue 1"
    assert alice.ledger.by_route == {"GET /repos/{owner}/{repo}/issues/{n}": 2}


@pytest.mark.parametrize(
    ("path", "route"),
    [
        ("/repositories/42/issues", "GET /repos/{owner}/{repo}/issues"),
        ("/repositories/42", "GET /repos/{owner}/{repo}"),
        ("/repositories/42/issues/7/comments", "GET /repos/{owner}/{repo}/issues/{n}/comments"),
    ],
)
def test_the_ledger_counts_the_id_form_under_the_operations_route(path: str, route: str) -> None:
    assert route_of("GET", path) == route


# -- closed_by (paginate-issues, search-issues: listings and search items lack it)


def test_closed_by_comes_only_with_one_issue(gh: Any) -> None:
    bob = gh.gateway("bob")
    closed = bob.patch("/repos/alice/widgets/issues/1", json={"state": "closed"}).body
    assert closed["closed_by"]["login"] == "bob"
    assert bob.get("/repos/alice/widgets/issues/1")["closed_by"]["login"] == "bob"
    listed = bob.get("/repos/alice/widgets/issues", params={"state": "closed"})
    assert [i["number"] for i in listed] == [1] and "closed_by" not in listed[0]
    found = bob.get("/search/issues", params={"q": "repo:alice/widgets is:closed"})["items"]
    assert found and all("closed_by" not in item for item in found)


def test_issues_carry_performed_via_github_app(gh: Any) -> None:
    alice = gh.gateway("alice")
    assert alice.get("/repos/alice/widgets/issues/1")["performed_via_github_app"] is None
    assert all(
        "performed_via_github_app" in i
        for i in alice.get("/repos/alice/widgets/issues", params={"per_page": 2})
    )


# -- labels (errors, labels, add-labels-to-issue)


def test_a_bad_label_colour_is_refused_422_with_errors(gh: Any) -> None:
    with pytest.raises(GitHubError) as raised:
        gh.gateway("alice").post(
            "/repos/alice/widgets/labels", json={"name": "foo", "color": "invalid"}
        )
    assert raised.value.status == 422
    assert raised.value.errors == [{"resource": "Label", "field": "color", "code": "invalid"}]


def test_label_names_are_case_insensitive(gh: Any) -> None:
    alice = gh.gateway("alice")
    added = alice.post("/repos/alice/widgets/issues/2/labels", json={"labels": ["BUG", "Workflow"]})
    assert [label["name"] for label in added.body] == ["bug", "workflow"]
    with pytest.raises(GitHubError) as raised:
        alice.post("/repos/alice/widgets/labels", json={"name": "Bug", "color": "ffffff"})
    assert raised.value.errors == [{"resource": "Label", "field": "name", "code": "already_exists"}]
    left = alice.request("DELETE", "/repos/alice/widgets/issues/2/labels/WORKFLOW").body
    assert [label["name"] for label in left] == ["bug"]


def test_labels_say_whether_github_made_them_and_where_a_new_one_lives(gh: Any) -> None:
    alice = gh.gateway("alice")
    labels = {x["name"]: x["default"] for x in alice.paginate("/repos/alice/widgets/labels")}
    assert labels == {"bug": True, "workflow": False}
    made = alice.post("/repos/alice/widgets/labels", json={"name": "good idea", "color": "00ff00"})
    assert made.status == 201 and made.body["default"] is False
    assert (made.header("location") or "").endswith("/repos/alice/widgets/labels/good%20idea")


# -- the small repository shape (add-and-remove-repository-collaborator, create-status)

SMALL_REPO_EXTRAS = {"created_at", "pushed_at", "permissions", "default_branch", "size"}


def test_invitations_and_statuses_nest_the_small_repository_shape(gh: Any) -> None:
    alice = gh.gateway("alice")
    invited = alice.request("PUT", "/repos/alice/widgets/collaborators/tusk-bot", json={})
    assert invited.status == 201
    assert (invited.header("location") or "") == invited.body["url"]
    assert "expired" not in invited.body
    listed = alice.get("/repos/alice/widgets/invitations")
    assert listed[0]["expired"] is False
    status = alice.get("/repos/alice/widgets/commits/main/status")
    for repo in (invited.body["repository"], listed[0]["repository"], status["repository"]):
        assert repo["full_name"] == "alice/widgets"
        assert not SMALL_REPO_EXTRAS & set(repo)
    assert gh.take_violations() == []


# -- media types (get-content)


@pytest.mark.parametrize("accept", ["application/vnd.github.v3.raw", "application/vnd.github.raw"])
def test_raw_content_is_answered_in_the_media_type_asked_for(gh: Any, accept: str) -> None:
    answer = gh.gateway("alice").request(
        "GET", "/repos/alice/widgets/contents/README.md", accept=accept
    )
    assert answer.text == "# Widgets\n"
    assert (answer.header("content-type") or "").startswith(accept)


def test_renaming_a_repository_moves_it_and_its_old_name_redirects_by_id(gh: Any) -> None:
    alice = gh.gateway("alice")
    renamed = alice.patch("/repos/alice/widgets", json={"name": "doohickeys"}).body
    assert renamed["full_name"] == "alice/doohickeys" and renamed["id"] == 4242
    old = alice.request("GET", "/repos/alice/widgets/issues/3", follow_redirects=False)
    assert (old.status, old.header("location") or "") == (301, old.body["url"])
    assert old.body["url"].endswith("/repositories/4242/issues/3")
    assert alice.get("/repos/alice/widgets/issues/3")["title"] == "issue 3"  # followed
    assert alice.get("/repositories/4242")["full_name"] == "alice/doohickeys"
    text = alice.get_text(
        "/repos/alice/doohickeys/contents/README.md", accept="application/vnd.github.raw"
    )
    assert text == "# Widgets\n"  # its git went with it
    with pytest.raises(GitHubError) as raised:
        alice.patch("/repos/alice/doohickeys", json={"homepage": "https://example.com"})
    assert raised.value.status == 501  # a field the stand-in does not model is refused
    assert gh.take_violations() == []


def test_a_fault_set_on_a_route_hits_its_pages_under_the_repository_id(gh: Any) -> None:
    """The gateway retries a 502 on page 2, fetched where GitHub's Link points."""
    alice = gh.gateway("alice")
    first = alice.request("GET", "/repos/alice/widgets/issues")
    gh.add_fault("GET", r"^/repos/alice/widgets/issues$", status=502, count=1)
    second = alice.request("GET", first.links["next"])
    assert second.status == 200 and alice.ledger.retries == 1
    faulted = [e for e in gh.journal() if e.get("note") == "fault"]
    assert [e["path"] for e in faulted] == ["/repositories/4242/issues"]
