"""Scenarios shared by the local GitHub's own tests."""

from __future__ import annotations

import copy
from typing import Any

import pytest

BASE: dict[str, Any] = {
    "users": [
        {"login": "alice"},
        {"login": "bob"},
        {"login": "tusk-bot"},
        {"login": "renovate[bot]", "type": "Bot"},
    ],
    "tokens": {
        "alice": {"user": "alice", "scopes": ["repo"]},
        "bob": {"user": "bob", "scopes": ["repo"]},
        "bot-read": {"user": "tusk-bot", "scopes": ["notifications", "repo"], "read_only": True},
        "agent": {"user": "tusk-bot", "scopes": ["repo", "delete_repo", "workflow"]},
        "agent-no-delete": {"user": "tusk-bot", "scopes": ["repo"]},
    },
    "repos": [
        {
            "name": "alice/widgets",
            "description": "Widgets",
            "collaborators": {"bob": "write"},
            "labels": ["bug"],
            "branches": [{"name": "main", "protected": {"required_approving_review_count": 1}}],
            "files": {"README.md": "# Widgets\n\nA smal library.\n"},
            "issues": [
                {
                    "number": 1,
                    "author": "alice",
                    "title": "Typo in README",
                    "body": "It says smal.",
                    "labels": ["bug"],
                    "comments": [{"author": "alice", "body": "@tusk-bot please fix it"}],
                }
            ],
            "pulls": [
                {
                    "number": 2,
                    "author": "bob",
                    "title": "Fix the typo",
                    "body": "Fixes #1",
                    "head": "fix-typo",
                    "files": {"README.md": "# Widgets\n\nA small library.\n"},
                    "reviews": [
                        {
                            "author": "alice",
                            "body": "Looks good",
                            "state": "APPROVED",
                            "comments": [{"path": "README.md", "line": 3, "body": "nice"}],
                        }
                    ],
                }
            ],
            "discussions": [
                {
                    "number": 3,
                    "author": "bob",
                    "title": "Ideas",
                    "body": "What next, @tusk-bot?",
                    "category": "Ideas",
                    "comments": [
                        {
                            "author": "alice",
                            "body": "More widgets",
                            "replies": [{"author": "bob", "body": "+1"}],
                        }
                    ],
                }
            ],
        },
        {"name": "tusk-bot/widgets", "fork_of": "alice/widgets"},
        {
            "name": "alice/tusk-control",
            "private": True,
            "collaborators": {"tusk-bot": "write"},
            "labels": ["workflow"],
        },
    ],
}


def scenario(**changes: Any) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    data.update(changes)
    return data


@pytest.fixture
def base_scenario() -> dict[str, Any]:
    return scenario()
