"""Step-to-step contracts: they round-trip, refuse unknown fields, and check their patterns."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from tusk.contracts.models import (
    CONTRACT_MODELS,
    ApprovalRequest,
    AuditRecord,
    BlockedRepo,
    BlockedUser,
    Blocklist,
    ContextDocument,
    GoAwayRequest,
    PermissionConfig,
    RunMetadata,
    Shard,
    StopRequest,
    Trigger,
    UndoRequest,
)
from tusk.contracts.raw_context import RawContext

WHEN = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
TRIGGER = Trigger(
    type="issue_comment",
    id="101",
    url="https://github.com/alice/widgets/issues/1#issuecomment-101",
    number=1,
    author="alice",
    body="@tusk-bot fix it",
    created_at=WHEN,
)
RAW = RawContext.model_validate(
    {
        "kind": "issue",
        "thread": {"number": 1, "title": "Typo", "user": {"login": "alice"}},
        "comments": [{"id": 101, "body": "@tusk-bot fix it", "created_at": "2026-01-02T03:04:05Z"}],
    }
)
SAMPLES: dict[str, BaseModel] = {
    "raw-context": RAW,
    "context-document": ContextDocument(
        jobid="alice-widgets-101",
        repo="alice/widgets",
        actor="alice",
        trust_level="owner",
        permission_config=PermissionConfig(marker="[permissions: comment-on-this-issue]"),
        trigger=TRIGGER,
        raw=RAW,
        timestamp=WHEN,
    ),
    "shard": Shard(
        jobid="alice-widgets-101",
        shard_index=0,
        total_shards=2,
        checksum="sha256:" + "0" * 64,
        data="H4sIAAAA",
    ),
    "permission-config": PermissionConfig(operations=("comment",), only_this_thread=True),
    "go-away-request": GoAwayRequest(
        jobid="alice-widgets-102",
        actor="alice",
        repo="alice/widgets",
        trust_level="owner",
        comment_id="102",
        comment_url="https://github.com/alice/widgets/issues/1#issuecomment-102",
        timestamp=WHEN,
    ),
    "approval-request": ApprovalRequest(
        jobid="alice-widgets-103",
        verb="apply",
        digest="sha256:" + "ab" * 32,
        actor="alice",
        repo="alice/widgets",
        number=1,
        comment_id="103",
        comment_url="https://github.com/alice/widgets/issues/1#issuecomment-103",
        timestamp=WHEN,
    ),
    "undo-request": UndoRequest(
        jobid="alice-widgets-104",
        actor="alice",
        repo="alice/widgets",
        trust_level="owner",
        comment_id="104",
        comment_url="https://github.com/alice/widgets/issues/1#issuecomment-104",
        timestamp=WHEN,
    ),
    "stop-request": StopRequest(
        jobid="alice-widgets-105",
        actor="alice",
        repo="alice/widgets",
        trust_level="owner",
        comment_id="105",
        comment_url="https://github.com/alice/widgets/issues/1#issuecomment-105",
        timestamp=WHEN,
    ),
    "blocklist": Blocklist(
        repos=(BlockedRepo(repo="alice/widgets", by="alice", at=WHEN),),
        users=(BlockedUser(user="bob", at=WHEN),),
    ),
    "audit-record": AuditRecord(
        seq=0,
        time=WHEN,
        tool="create_comment",
        kind="write",
        target="alice/widgets#1",
        args_digest="ab" * 32,
        decision="allowed",
        prev_hash="0" * 64,
        hash="1" * 64,
    ),
    "run-metadata": RunMetadata(
        jobid="alice-widgets-101",
        repo="alice/widgets",
        trigger_url=TRIGGER.url,
        trigger_type="issue_comment",
        log_issue_number=7,
        log_issue_url="https://github.com/alice/tusk-control/issues/7",
        control_repo="alice/tusk-control",
        task_path="task.md",
        context_path="context.md",
        context_file="context.json",
    ),
}


def test_every_contract_has_a_sample() -> None:
    assert set(SAMPLES) == set(CONTRACT_MODELS)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_contract_round_trips_through_json(name: str) -> None:
    model = CONTRACT_MODELS[name]
    sample = SAMPLES[name]
    assert model.model_validate_json(sample.model_dump_json()) == sample


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_contract_refuses_unknown_fields(name: str) -> None:
    data: dict[str, Any] = SAMPLES[name].model_dump(mode="json")
    data["surprise"] = 1
    with pytest.raises(ValidationError) as caught:
        CONTRACT_MODELS[name].model_validate(data)
    assert caught.value.errors()[0]["type"] == "extra_forbidden"


def test_nested_unknown_field_is_refused_too() -> None:
    data = SAMPLES["context-document"].model_dump(mode="json")
    data["trigger"]["sneaky"] = True
    with pytest.raises(ValidationError):
        ContextDocument.model_validate(data)


@pytest.mark.parametrize(
    ("where", "key"),
    [("thread", "author"), ("thread", "createdAt"), ("comments", "url"), ("top", "issue")],
)
def test_the_raw_context_has_one_spelling_and_graphqls_names_are_refused(
    where: str, key: str
) -> None:
    data = RAW.model_dump(mode="json")
    target = {"thread": data["thread"], "comments": data["comments"][0], "top": data}[where]
    target[key] = {"login": "mallory"} if key in ("author", "issue") else "x"
    with pytest.raises(ValidationError) as caught:
        ContextDocument.model_validate(
            {**SAMPLES["context-document"].model_dump(mode="json"), "raw": data}
        )
    assert caught.value.errors()[0]["type"] == "extra_forbidden"


def test_a_raw_context_of_another_version_is_refused() -> None:
    with pytest.raises(ValidationError):
        RawContext.model_validate({**RAW.model_dump(mode="json"), "version": 2})


def test_context_document_has_the_fields_mission_p7_names() -> None:
    data = SAMPLES["context-document"].model_dump(mode="json")
    assert {"version", "jobid", "repo", "actor", "trust_level", "permission_config"} <= set(data)
    assert {"trigger", "raw", "timestamp"} <= set(data)
    assert {"type", "id", "url"} <= set(data["trigger"])
    shard = SAMPLES["shard"].model_dump(mode="json")
    assert set(shard) == {"jobid", "shard_index", "total_shards", "encoding", "checksum", "data"}


def test_unknown_context_version_is_refused() -> None:
    data = SAMPLES["context-document"].model_dump(mode="json")
    data["version"] = 2
    with pytest.raises(ValidationError):
        ContextDocument.model_validate(data)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("jobid", "Has Capitals"),
        ("jobid", "ab"),
        ("checksum", "md5:abc"),
        ("checksum", "sha256:" + "G" * 64),
        ("shard_index", -1),
        ("total_shards", 0),
        ("encoding", "zstd"),
    ],
)
def test_shard_patterns_and_bounds(field: str, value: object) -> None:
    data = SAMPLES["shard"].model_dump(mode="json")
    data[field] = value
    with pytest.raises(ValidationError):
        Shard.model_validate(data)


@pytest.mark.parametrize("repo", ["alice", "alice/..", "../etc", "alice/wid gets", "a/b/c"])
def test_repo_names_that_could_walk_an_api_path_are_refused(repo: str) -> None:
    with pytest.raises(ValidationError):
        BlockedRepo(repo=repo, by="alice", at=WHEN)


def test_trust_level_is_one_of_three() -> None:
    data = SAMPLES["go-away-request"].model_dump(mode="json")
    data["trust_level"] = "admin"
    with pytest.raises(ValidationError):
        GoAwayRequest.model_validate(data)


def test_contracts_are_frozen() -> None:
    with pytest.raises(ValidationError):
        SAMPLES["shard"].shard_index = 3  # type: ignore[misc]


def test_blocklist_blocks_repo_and_every_repo_of_a_user_case_insensitively() -> None:
    blocklist = SAMPLES["blocklist"]
    assert isinstance(blocklist, Blocklist)
    assert blocklist.blocks("Alice/Widgets")
    assert not blocklist.blocks("alice/gadgets")
    assert blocklist.blocks("BOB/anything")
    assert blocklist.blocks_user("Bob") and not blocklist.blocks_user("alice")
