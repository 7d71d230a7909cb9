"""The local GitHub's set-up endpoints behave as GitHub documents them: a repository
created empty, files replaced only with their current blob sha, an invitee without
access until they accept, secrets sealed with the repository's key, workflows enabled."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from nacl.public import PrivateKey, PublicKey, SealedBox
from pydantic import SecretStr

from tusk.github.gateway import Conflict, GitHubError, NotFound, ValidationFailed
from tusk.github.sealing import seal

WORLD = {
    "users": [
        {"login": "alice"},
        {"login": "bot"},
        {"login": "acme", "type": "Organization", "members": ["alice"]},
    ],
    "tokens": {
        "alice": {"user": "alice", "scopes": ["repo", "workflow"]},
        "alice-repo": {"user": "alice", "scopes": ["repo"]},
        "bot": {"user": "bot", "scopes": ["repo"]},
    },
    "repos": [
        {
            "name": "alice/old",
            "private": True,
            "files": {".github/workflows/poll.yml": "on: push\n"},
            "disabled_workflows": [".github/workflows/poll.yml"],
        }
    ],
}


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


@pytest.fixture
def gh(local_github: Any) -> Any:
    local_github.load(WORLD)
    return local_github


def test_a_new_repository_is_empty_and_its_name_taken_once(gh: Any) -> None:
    alice = gh.gateway("alice")
    made = alice.post("/user/repos", json={"name": "control", "private": True})
    assert made.status == 201 and made.body["private"] is True
    with pytest.raises(NotFound):
        alice.get("/repos/alice/control/contents/tusk.yml")
    with pytest.raises(ValidationFailed):
        alice.post("/user/repos", json={"name": "control"}, may_repeat=False)
    org = alice.post("/orgs/acme/repos", json={"name": "control"})
    assert org.body["full_name"] == "acme/control"
    with pytest.raises(GitHubError) as refused:
        gh.gateway("bot").post("/orgs/acme/repos", json={"name": "x"}, may_repeat=False)
    assert refused.value.status == 403


def test_a_file_is_replaced_only_with_the_blob_sha_it_replaces(gh: Any) -> None:
    alice = gh.gateway("alice")
    alice.post("/user/repos", json={"name": "control"})
    path = "/repos/alice/control/contents/tusk.yml"
    first = alice.put(path, json={"message": "add", "content": b64("bot: a\n")})
    assert first.status == 201
    sha = first.body["content"]["sha"]
    with pytest.raises(ValidationFailed):  # GitHub: "sha" wasn't supplied
        alice.put(path, json={"message": "edit", "content": b64("bot: b\n")}, may_repeat=False)
    stale = {"message": "edit", "content": b64("bot: b\n"), "sha": "0" * 40}
    with pytest.raises(Conflict):
        alice.put(path, json=stale, may_repeat=False)
    second = alice.put(path, json={**stale, "sha": sha})
    assert second.status == 200
    text = base64.b64decode(alice.get(path)["content"]).decode()
    assert text == "bot: b\n"


def test_a_workflow_file_needs_the_workflow_scope(gh: Any) -> None:
    gh.gateway("alice").post("/user/repos", json={"name": "control"})
    path = "/repos/alice/control/contents/.github/workflows/poll.yml"
    with pytest.raises(NotFound) as refused:
        gh.gateway("alice-repo").put(
            path, json={"message": "add", "content": b64("on: push\n")}, may_repeat=False
        )
    assert "without `workflow` scope" in str(refused.value)


def test_the_invitee_reaches_the_repository_only_once_it_accepts(gh: Any) -> None:
    alice, bot = gh.gateway("alice"), gh.gateway("bot")
    invited = alice.put("/repos/alice/old/collaborators/bot", json={"permission": "push"})
    assert invited.status == 201 and invited.body["invitee"]["login"] == "bot"
    again = alice.put("/repos/alice/old/collaborators/bot", json={"permission": "push"})
    assert again.body["id"] == invited.body["id"]  # the same open invitation
    assert [i["id"] for i in alice.get("/repos/alice/old/invitations")] == [invited.body["id"]]
    with pytest.raises(NotFound):
        bot.get("/repos/alice/old")
    with pytest.raises(NotFound):
        alice.get("/repos/alice/old/collaborators/bot")
    (mine,) = bot.get("/user/repository_invitations")
    assert bot.patch(f"/user/repository_invitations/{mine['id']}").status == 204
    assert bot.get("/repos/alice/old")["permissions"]["push"] is True
    assert alice.request("GET", "/repos/alice/old/collaborators/bot").status == 204
    assert bot.get("/user/repository_invitations") == []
    assert alice.put("/repos/alice/old/collaborators/bot", json={}).status == 204


def test_a_secret_is_stored_only_when_sealed_with_the_repositorys_key(gh: Any) -> None:
    alice = gh.gateway("alice")
    key = alice.get("/repos/alice/old/actions/secrets/public-key")
    path = "/repos/alice/old/actions/secrets/TUSK_BOT_TOKEN"
    other = base64.b64encode(bytes(PrivateKey.generate().public_key)).decode()
    wrong = {"encrypted_value": seal(SecretStr("v"), other), "key_id": key["key_id"]}
    with pytest.raises(ValidationFailed):
        alice.put(path, json=wrong)
    right = {"encrypted_value": seal(SecretStr("ghp_x1"), key["key"]), "key_id": key["key_id"]}
    assert alice.put(path, json=right).status == 201
    assert alice.put(path, json=right).status == 204  # updated
    repo = gh.state()["repos"]["alice/old"]
    assert repo["secret_values"] == {"TUSK_BOT_TOKEN": "ghp_x1"}
    listed = alice.get("/repos/alice/old/actions/secrets")["secrets"]
    assert [s["name"] for s in listed] == ["TUSK_BOT_TOKEN"]
    with pytest.raises(ValidationFailed):  # GitHub's names: no GITHUB_ prefix
        alice.put("/repos/alice/old/actions/secrets/GITHUB_X", json=right)


def test_sealing_opens_with_the_private_key() -> None:
    private = PrivateKey.generate()
    public = base64.b64encode(bytes(private.public_key)).decode()
    sealed = base64.b64decode(seal(SecretStr("sk-ant-1"), public))
    assert SealedBox(private).decrypt(sealed) == b"sk-ant-1"
    assert bytes(PublicKey(base64.b64decode(public))) == bytes(private.public_key)


def test_a_disabled_workflow_is_listed_so_and_enabled(gh: Any) -> None:
    alice = gh.gateway("alice")
    listed = alice.get("/repos/alice/old/actions/workflows")["workflows"]
    assert [(w["path"], w["state"]) for w in listed] == [
        (".github/workflows/poll.yml", "disabled_manually")
    ]
    assert alice.put("/repos/alice/old/actions/workflows/poll.yml/enable").status == 204
    (workflow,) = alice.get("/repos/alice/old/actions/workflows")["workflows"]
    assert workflow["state"] == "active"
    with pytest.raises(NotFound):
        alice.put("/repos/alice/old/actions/workflows/nope.yml/enable")
