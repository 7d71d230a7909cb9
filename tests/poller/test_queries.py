"""Every GraphQL document the poller sends validates against GitHub's published schema."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from graphql import GraphQLSchema, build_ast_schema, parse, validate

from tusk.poller import context, graphql_pages
from tusk.poller.graphql_pages import Locator, Pending, child_locator

SCHEMA_FILE = Path(__file__).parents[2] / "node_modules/@octokit/graphql-schema/schema.graphql"


@cache
def schema() -> GraphQLSchema:
    built = build_ast_schema(parse(SCHEMA_FILE.read_text(encoding="utf-8")), assume_valid_sdl=True)
    built._validation_errors = []  # GitHub's SDL breaks a deprecation rule graphql-core checks
    return built


def errors_of(query: str) -> list[str]:
    return [error.message for error in validate(schema(), parse(query))]


@pytest.mark.parametrize("kind", ["issue", "pull_request", "discussion"])
def test_main_query_is_valid(kind: context.ThreadKind) -> None:
    assert errors_of(context.build_main_query(kind)) == []


def test_latest_discussion_query_is_valid() -> None:
    assert errors_of(context.build_main_query("discussion", latest_discussion=True)) == []


def test_follow_up_queries_are_valid(monkeypatch: pytest.MonkeyPatch) -> None:
    """Follow-ups batch several connections, reached by path or by node id, in one document."""
    sent: list[str] = []

    class Capture:
        graphql_url = "http://unused/graphql"

        def graphql_response(self, query: str, variables: dict) -> object:
            sent.append(query)
            raise StopIteration

    thread_locator = Locator(
        open="repository(owner: $owner, name: $name) { thread: issueOrPullRequest(number: $number) "
        "{ ... on PullRequest {",
        close="} } }",
        declarations={"owner": "String!", "name": "String!", "number": "Int!"},
        values={"owner": "a", "name": "b", "number": 1},
    )
    pending = [
        Pending(thread_locator, context.ISSUE_COMMENTS, "c1", []),
        Pending(thread_locator, context.REVIEWS, "c2", []),
        Pending(
            child_locator(thread_locator, context.REVIEWS, "r0"), context.REVIEW_COMMENTS, "c3", []
        ),
        Pending(
            child_locator(thread_locator, context.REVIEWS, None), context.REVIEW_COMMENTS, "c6", []
        ),
        Pending(
            child_locator(thread_locator, context.LINKED_ISSUES, "l1"), context.LABELS, "c7", []
        ),
        Pending(
            child_locator(thread_locator, context.LINKED_ISSUES, None),
            context.ISSUE_COMMENTS,
            "c8",
            [],
        ),
        Pending(Locator(open="viewer {", close="}"), context.BOT_REPOS, "c5", []),
    ]
    with pytest.raises(StopIteration):
        graphql_pages.follow(Capture(), pending, optional=frozenset())  # type: ignore[arg-type]
    assert len(sent) == 1
    assert errors_of(sent[0]) == []
