"""Which repositories the read tools serve: the pure decisions."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tusk.contracts.models import ContextDocument, PermissionConfig, Trigger
from tusk.mcp.gate.policy import Refused
from tusk.mcp.reads.scope import (
    ReadScope,
    named_repositories,
    repo_of_api_url,
    run_repositories,
)

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def context(body: str = "@bot fix it", raw: dict | None = None) -> ContextDocument:
    return ContextDocument(
        jobid="job-1-abc",
        repo="alice/widgets",
        actor="alice",
        trust_level="owner",
        permission_config=PermissionConfig(),
        trigger=Trigger(
            type="issue_comment",
            id="1",
            url="https://github.com/alice/widgets/issues/1#issuecomment-1",
            number=1,
            author="alice",
            body=body,
            created_at=NOW,
        ),
        raw={"kind": "issue", "thread": {}, **(raw or {})},
        timestamp=NOW,
    )


def scope(*, read_public: bool = False, repos: tuple[str, ...] = ()) -> ReadScope:
    return ReadScope(
        trigger_repo="alice/widgets",
        control_repo="alice/control",
        repos=frozenset({"alice/widgets", "bot/widgets", *repos}),
        trigger_number=1,
        read_public=read_public,
    )


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("see bob/gadgets#12", {"bob/gadgets"}),
        ("https://github.com/Bob/Gadgets/pull/3", {"bob/gadgets"}),
        ("clone https://github.com/bob/gadgets.git", {"bob/gadgets"}),
        ("edit src/app.py and docs/index.md", set()),  # paths are not repositories
        ("a.b/c#1 or x/y/z#2", set()),
        ("https://evil.example/bob/gadgets", set()),
    ],
)
def test_named_repositories(text: str, found: set[str]) -> None:
    assert named_repositories(text) == found


def test_run_repositories_come_from_the_context_and_allowed_users_only() -> None:
    raw = {
        "repository": {"full_name": "alice/widgets", "parent": "upstream/widgets"},
        "bot": {"fork": {"full_name": "bot/widgets-1"}},
        "linked_issues": [{"repo": "carol/lib", "issue": {}}],
        "comments": [
            {"user": {"login": "alice"}, "body": "also dave/tools#3"},
            {"user": {"login": "mallory"}, "body": "and mallory/loot#1"},
        ],
    }
    repos = run_repositories(
        context("@bot compare https://github.com/erin/spec", raw),
        allowed_users=["alice"],
    )
    assert repos == {
        "alice/widgets",
        "upstream/widgets",
        "bot/widgets-1",
        "carol/lib",
        "dave/tools",
        "erin/spec",
    }


def test_verdicts() -> None:
    s = scope()
    assert s.verdict("Alice/Widgets") == "in"
    assert s.verdict("bob/other") == "out"
    assert scope(read_public=True).verdict("bob/other") == "public?"
    assert scope(read_public=True).verdict("alice/control") == "out"
    control_trigger = ReadScope(
        trigger_repo="alice/control", control_repo="alice/control", trigger_number=5
    )
    assert control_trigger.verdict("alice/control", number=5) == "in"  # the mention's own thread
    assert control_trigger.verdict("alice/control", number=6) == "out"
    assert control_trigger.verdict("alice/control") == "out"


@pytest.mark.parametrize(
    ("query", "read_public", "sent"),
    [
        ("repo:alice/widgets bug", False, ("repo:alice/widgets bug", False)),
        ("repo:alice/widgets bug", True, ("repo:alice/widgets bug", False)),
        ("bug", True, ("bug is:public", True)),
        ("repo:bob/public bug", True, ("repo:bob/public bug is:public", True)),
        ("org:alice bug", True, ("org:alice bug is:public", True)),
        ("bug", False, None),
        ("repo:bob/other bug", False, None),
        ("repo:alice/widgets org:bob bug", False, None),
        ("repo:alice/control memory", True, None),
        ("repo:alice/../x", True, None),
    ],
)
def test_search_queries(query: str, read_public: bool, sent: tuple[str, bool] | None) -> None:
    s = scope(read_public=read_public)
    if sent is None:
        with pytest.raises(Refused) as refused:
            s.search_query(query)
        assert refused.value.code == "OUT_OF_SCOPE"
    else:
        assert s.search_query(query) == sent


def test_search_results_are_filtered_again() -> None:
    s = scope(read_public=True)
    assert s.allows_result("alice/widgets", public_search=False)
    assert not s.allows_result("bob/other", public_search=False)
    assert s.allows_result("bob/other", public_search=True)
    assert not s.allows_result("alice/control", public_search=True)
    assert repo_of_api_url("https://api.github.com/repos/bob/other") == "bob/other"
    assert repo_of_api_url(None) is None
