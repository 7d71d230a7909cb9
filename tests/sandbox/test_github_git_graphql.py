"""Git smart HTTP and GraphQL on the local GitHub."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import requests

from tusk.git.env import basic_auth_header, config_env


@pytest.fixture
def gh(local_github: Any, base_scenario: dict[str, Any]) -> Any:
    local_github.load(base_scenario)
    return local_github


def _git(cwd: Path, *args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    if token:
        # The credential travels in the environment, never on the command line.
        env.update(config_env([("http.extraHeader", basic_auth_header(token))]))
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def test_clone_and_push_to_own_fork_then_branch_is_listed(gh: Any, tmp_path: Path) -> None:
    cloned = _git(tmp_path, "clone", "-q", gh.clone_url("tusk-bot/widgets"), "w")
    assert cloned.returncode == 0, cloned.stderr
    work = tmp_path / "w"
    assert (work / "README.md").read_text().startswith("# Widgets")
    (work / "README.md").write_text("# Widgets\n\nA small library.\n")
    for args in (
        ("checkout", "-q", "-b", "fix"),
        ("add", "."),
        ("-c", "user.name=bot", "-c", "user.email=b@x", "commit", "-q", "-m", "Fix typo"),
    ):
        assert _git(work, *args).returncode == 0
    pushed = _git(work, "push", "-q", "origin", "fix", token="agent")
    assert pushed.returncode == 0, pushed.stderr
    branch = gh.gateway("agent").get("/repos/tusk-bot/widgets/branches/fix")
    head = _git(work, "rev-parse", "HEAD").stdout.strip()
    assert branch["commit"]["sha"] == head
    pull = gh.gateway("agent").post(
        "/repos/alice/widgets/pulls",
        {"title": "Fix typo", "head": "tusk-bot:fix", "base": "main", "body": "Fixes #1"},
    )
    assert pull.body["changed_files"] == 1


def test_push_without_push_rights_is_refused(gh: Any, tmp_path: Path) -> None:
    assert _git(tmp_path, "clone", "-q", gh.clone_url("alice/widgets"), "w").returncode == 0
    work = tmp_path / "w"
    (work / "x.txt").write_text("x")
    _git(work, "add", ".")
    _git(work, "-c", "user.name=b", "-c", "user.email=b@x", "commit", "-q", "-m", "x")
    refused = _git(work, "push", "-q", "origin", "HEAD:main", token="agent")
    assert refused.returncode != 0
    read_only = _git(work, "push", "-q", "origin", "HEAD:main", token="bot-read")
    assert read_only.returncode != 0
    assert (
        gh.gateway("alice").get("/repos/alice/widgets/branches/main")["commit"]["sha"]
        != _git(work, "rev-parse", "HEAD").stdout.strip()
    )


def test_private_repository_clone_needs_a_token(gh: Any, tmp_path: Path) -> None:
    assert _git(tmp_path, "clone", "-q", gh.clone_url("alice/tusk-control"), "a").returncode != 0
    assert (
        _git(
            tmp_path, "clone", "-q", gh.clone_url("alice/tusk-control"), "b", token="agent"
        ).returncode
        == 0
    )


DISCUSSION = """
query($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    discussion(number: $number) {
      id number title body author { login } createdAt updatedAt url category { name }
      comments(first: 1, after: $after) {
        totalCount pageInfo { hasNextPage endCursor }
        nodes { id databaseId body author { login } createdAt updatedAt url
                replies(first: 10) { totalCount nodes { body author { login } } } }
      }
    }
  }
}
"""


def test_discussion_with_comments_and_replies(gh: Any) -> None:
    data = gh.gateway("agent").graphql(
        DISCUSSION, {"owner": "alice", "name": "widgets", "number": 3}
    )
    discussion = data["repository"]["discussion"]
    assert (discussion["title"], discussion["category"]["name"]) == ("Ideas", "Ideas")
    comments = discussion["comments"]
    assert comments["totalCount"] == 1 and comments["pageInfo"]["hasNextPage"] is False
    assert comments["nodes"][0]["replies"]["nodes"] == [{"body": "+1", "author": {"login": "bob"}}]


def test_issue_or_pull_request_context_fields(gh: Any) -> None:
    query = """{ repository(owner: "alice", name: "widgets") {
      issueOrPullRequest(number: 2) { __typename ... on PullRequest {
        headRefName baseRefName merged files(first: 10) { nodes { path additions deletions } }
        reviews(first: 10) { nodes { state author { login } } }
        reviewThreads(first: 10) { nodes { path comments(first: 10) { nodes { body } } } }
        closingIssuesReferences(first: 5) { nodes { number } }
        labels(first: 5) { nodes { name } } assignees(first: 5) { nodes { login } }
        milestone { title }
        comments(first: 100) { totalCount pageInfo { hasNextPage } } } } } }"""
    pull = gh.gateway("agent").graphql(query)["repository"]["issueOrPullRequest"]
    assert pull["__typename"] == "PullRequest" and pull["headRefName"] == "fix-typo"
    assert pull["files"]["nodes"] == [{"path": "README.md", "additions": 1, "deletions": 1}]
    assert pull["closingIssuesReferences"]["nodes"] == [{"number": 1}]
    assert pull["reviewThreads"]["nodes"][0]["comments"]["nodes"] == [{"body": "nice"}]


def test_graphql_document_outside_githubs_schema_is_a_violation(gh: Any) -> None:
    response = requests.post(
        f"{gh.url}/graphql",
        json={"query": '{ repository(owner: "alice", name: "widgets") { nope } }'},
        headers={"Authorization": "bearer agent"},
        timeout=30,
    )
    assert response.status_code == 500
    assert response.json()["message"].startswith("sandbox spec violation:")
    assert [v["kind"] for v in gh.take_violations()] == ["graphql"]


def test_unimplemented_schema_field_is_null_and_noted(gh: Any) -> None:
    response = requests.post(
        f"{gh.url}/graphql",
        json={"query": '{ repository(owner: "alice", name: "widgets") { mirrorUrl name } }'},
        headers={"Authorization": "bearer agent"},
        timeout=30,
    )
    assert response.json()["data"]["repository"] == {"mirrorUrl": None, "name": "widgets"}
    assert {"kind": "sandbox-unimplemented", "detail": "Repository.mirrorUrl"} in gh.notes()


def test_push_touching_workflows_needs_the_workflow_scope(gh: Any, tmp_path: Path) -> None:
    assert _git(tmp_path, "clone", "-q", gh.clone_url("tusk-bot/widgets"), "w").returncode == 0
    work = tmp_path / "w"
    (work / ".github" / "workflows").mkdir(parents=True)
    (work / ".github" / "workflows" / "ci.yml").write_text("on: push\n")
    _git(work, "add", ".")
    _git(work, "-c", "user.name=b", "-c", "user.email=b@x", "commit", "-q", "-m", "ci")
    refused = _git(work, "push", "-q", "origin", "HEAD:ci", token="agent-no-delete")
    assert refused.returncode != 0 and "without `workflow` scope" in refused.stderr
    assert _git(work, "push", "-q", "origin", "HEAD:ci", token="agent").returncode == 0


def test_connection_pagination_with_first_and_after(gh: Any, base_scenario: dict[str, Any]) -> None:
    base_scenario["repos"][0]["issues"][0]["comments"] = [
        {"author": "bob", "body": f"c{i}"} for i in range(5)
    ]
    gh.load(base_scenario)
    query = """query($after: String) { repository(owner: "alice", name: "widgets") {
      issue(number: 1) { comments(first: 2, after: $after) {
        totalCount pageInfo { hasNextPage endCursor } nodes { body } } } } }"""
    bodies, after = [], None
    while True:
        page = gh.gateway("agent").graphql(query, {"after": after})["repository"]["issue"][
            "comments"
        ]
        bodies += [n["body"] for n in page["nodes"]]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert bodies == [f"c{i}" for i in range(5)]


def test_viewer_repositories_include_collaborations(gh: Any) -> None:
    query = (
        "{ viewer { login repositories(first: 10) { totalCount nodes { nameWithOwner isFork } } } }"
    )
    viewer = gh.gateway("agent").graphql(query)["viewer"]
    names = {n["nameWithOwner"] for n in viewer["repositories"]["nodes"]}
    assert names == {"tusk-bot/widgets", "alice/tusk-control"}
    owned = gh.gateway("agent").graphql(
        "{ viewer { repositories(first: 10, ownerAffiliations: [OWNER]) "
        "{ nodes { nameWithOwner } } } }"
    )["viewer"]["repositories"]["nodes"]
    assert owned == [{"nameWithOwner": "tusk-bot/widgets"}]


def test_read_only_token_cannot_run_mutations(gh: Any) -> None:
    response = requests.post(
        f"{gh.url}/graphql",
        json={
            "query": 'mutation { addDiscussionComment(input: {discussionId: "x", body: "b"}) '
            "{ clientMutationId } }"
        },
        headers={"Authorization": "bearer bot-read"},
        timeout=30,
    )
    assert response.json()["errors"][0]["type"] == "FORBIDDEN"


def test_discussion_comment_mutation_notifies_mentions(gh: Any) -> None:
    discussion = gh.gateway("alice").graphql(
        '{ repository(owner: "alice", name: "widgets") { discussion(number: 3) { id } } }'
    )["repository"]["discussion"]
    mutation = """mutation($id: ID!, $body: String!) {
      addDiscussionComment(input: {discussionId: $id, body: $body}) { comment { body } } }"""
    gh.gateway("alice").graphql(mutation, {"id": discussion["id"], "body": "@tusk-bot hi"})
    threads = gh.gateway("bot-read").get("/notifications")
    ideas = next(t for t in threads if t["subject"]["title"] == "Ideas")
    assert ideas["subject"]["type"] == "Discussion" and ideas["reason"] == "mention"


def _discussion_id(gh: Any) -> str:
    return gh.gateway("alice").graphql(
        '{ repository(owner: "alice", name: "widgets") { discussion(number: 3) { id } } }'
    )["repository"]["discussion"]["id"]


def test_discussion_comment_needs_a_token_with_repo_scope(
    gh: Any, base_scenario: dict[str, Any]
) -> None:
    base_scenario["tokens"]["bob-inbox"] = {"user": "bob", "scopes": ["notifications"]}
    gh.load(base_scenario)
    mutation = """mutation($id: ID!) {
      addDiscussionComment(input: {discussionId: $id, body: "b"}) { comment { body } } }"""
    response = requests.post(
        f"{gh.url}/graphql",
        json={"query": mutation, "variables": {"id": _discussion_id(gh)}},
        headers={"Authorization": "bearer bob-inbox"},
        timeout=30,
    )
    assert response.json()["errors"][0]["type"] == "FORBIDDEN"
    assert response.json()["data"]["addDiscussionComment"] is None


def test_discussion_comment_on_an_invisible_repository_is_not_found(
    gh: Any, base_scenario: dict[str, Any]
) -> None:
    control = base_scenario["repos"][2]
    control["discussions"] = [
        {"number": 1, "author": "alice", "title": "Secret", "body": "b", "category": "General"}
    ]
    gh.load(base_scenario)
    secret = gh.gateway("alice").graphql(
        '{ repository(owner: "alice", name: "tusk-control") { discussion(number: 1) { id } } }'
    )["repository"]["discussion"]["id"]
    mutation = """mutation($id: ID!) {
      addDiscussionComment(input: {discussionId: $id, body: "b"}) { comment { body } } }"""
    response = requests.post(
        f"{gh.url}/graphql",
        json={"query": mutation, "variables": {"id": secret}},
        headers={"Authorization": "bearer bob"},
        timeout=30,
    )
    assert response.json()["errors"][0]["type"] == "NOT_FOUND"
    assert gh.state()["repos"]["alice/tusk-control"]["discussions"]["1"]["comments"] == []
