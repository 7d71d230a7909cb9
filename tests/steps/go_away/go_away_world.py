"""A world for go-away: a control repository with log issues, a repository the bot
worked in (its fork, its PR, its comments and review, other people's), repositories
owned by the people who may send it away, and one nobody asked it to leave."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tusk.contracts.config import Settings
from tusk.contracts.models import GoAwayRequest
from tusk.github.gateway import Gateway
from tusk.issues.log_issue import log_marker

BOT = "tusk-bot"
CONTROL = "ops/control"
AT = datetime(2026, 11, 30, 6, 0, tzinfo=UTC)


def settings(**overrides: Any) -> Settings:
    data: dict[str, Any] = {
        "bot": BOT,
        "control_repo": CONTROL,
        "allowed_users": ["alice"],
        **overrides,
    }
    return Settings.model_validate(data)


def log_issue(number: int, repo: str) -> dict[str, Any]:
    return {
        "number": number,
        "author": BOT,
        "title": f"[Agent Log] {repo} #1 — 2026-11-29 10:00",
        "body": f"{log_marker(f'job-{number}-old', repo)}\n# Task\n\n> fix it",
        "labels": ["workflow"],
    }


def scenario(*, everyone_asks: bool = False) -> dict[str, Any]:
    """``everyone_asks``: alice's and carol's comments end in "@bot go away" too."""
    world = _scenario()
    if everyone_asks:
        widgets = next(r for r in world["repos"] if r["name"] == "alice/widgets")
        for comment in widgets["issues"][0]["comments"]:
            if comment["author"] in ("alice", "carol"):
                comment["body"] += f"\n\n@{BOT} go away"
    return world


def _scenario() -> dict[str, Any]:
    return {
        "users": [{"login": login} for login in (BOT, "alice", "bob", "carol", "ops")],
        "tokens": {
            "agent": {"user": BOT, "scopes": ["repo", "delete_repo", "workflow"]},
            "agent-no-delete": {"user": BOT, "scopes": ["repo", "workflow"]},
            "bot-read": {"user": BOT, "scopes": ["notifications", "repo"], "read_only": True},
            "dispatch": {"user": "ops", "scopes": ["repo"]},
            "alice": {"user": "alice", "scopes": ["repo"]},
            "bob": {"user": "bob", "scopes": ["repo"]},
            "carol": {"user": "carol", "scopes": ["repo"]},
        },
        "repos": [
            {
                "name": CONTROL,
                "collaborators": {BOT: "write"},
                "labels": ["workflow", "bug"],
                "issues": [
                    log_issue(1, "alice/widgets"),
                    log_issue(2, "carol/notes"),
                    log_issue(3, "bob/tools"),
                ],
            },
            {
                "name": "alice/widgets",
                "collaborators": {"bob": "write", "carol": "read", BOT: "write"},
                "branches": [{"name": "main"}],
                "files": {"README.md": "# Widgest\n"},
                "issues": [
                    {
                        "number": 1,
                        "author": "alice",
                        "title": "Typo in README",
                        "body": "Widgest",
                        "comments": [
                            {"id": 501, "author": "alice", "body": f"@{BOT} please fix it"},
                            {"id": 502, "author": BOT, "body": "Opened #2 with the fix."},
                            {"id": 503, "author": "bob", "body": f"@{BOT} go away"},
                            {"id": 504, "author": "carol", "body": f"Thanks @{BOT}!"},
                            {"id": 505, "author": BOT, "body": "Anything else?"},
                        ],
                    }
                ],
                "pulls": [
                    {
                        "number": 2,
                        "author": "alice",
                        "title": "Alice's own work",
                        "head": "feature",
                        "base": "main",
                        "comments": [{"id": 601, "author": BOT, "body": "Looks fine to me."}],
                        "reviews": [
                            {
                                "id": 701,
                                "author": BOT,
                                "state": "COMMENTED",
                                "body": "Some notes",
                                "comments": [
                                    {
                                        "id": 801,
                                        "body": "Consider a test",
                                        "path": "README.md",
                                        "line": 1,
                                    }
                                ],
                            },
                            {"id": 702, "author": "bob", "state": "APPROVED", "body": "LGTM"},
                        ],
                        "review_comments": [
                            {
                                "id": 802,
                                "author": "bob",
                                "body": "Nice",
                                "path": "README.md",
                                "line": 1,
                            }
                        ],
                    },
                ],
                "discussions": [
                    {
                        "number": 3,
                        "author": "alice",
                        "title": "Roadmap",
                        "body": "Plans for next year",
                        "category": "Ideas",
                        "comments": [
                            {
                                "id": 1101,
                                "author": BOT,
                                "body": "I could draft it.",
                                "replies": [{"id": 1102, "author": "alice", "body": "Please"}],
                            },
                            {
                                "id": 1103,
                                "author": "alice",
                                "body": "Also this",
                                "replies": [{"id": 1104, "author": BOT, "body": "On it"}],
                            },
                            {"id": 1105, "author": BOT, "body": "Drafted."},
                        ],
                    }
                ],
            },
            {"name": f"{BOT}/widgets", "fork_of": "alice/widgets"},
            {
                "name": "bob/tools",
                "collaborators": {BOT: "write"},
                "issues": [
                    {
                        "number": 1,
                        "author": "bob",
                        "title": "Tool idea",
                        "comments": [
                            {"id": 901, "author": BOT, "body": "I can help."},
                            {"id": 902, "author": "bob", "body": "Thanks."},
                        ],
                    }
                ],
            },
            {"name": f"{BOT}/tools", "fork_of": "bob/tools"},
            {
                "name": "alice/other",
                "issues": [
                    {
                        "number": 1,
                        "author": "alice",
                        "title": "Other",
                        "comments": [{"id": 951, "author": BOT, "body": "Left alone."}],
                    }
                ],
                "discussions": [
                    {
                        "number": 2,
                        "author": "alice",
                        "title": "Elsewhere",
                        "body": "Not affected",
                        "category": "General",
                        "comments": [{"id": 1201, "author": BOT, "body": "Stays."}],
                    }
                ],
            },
            {
                "name": "carol/notes",
                "issues": [
                    {
                        "number": 1,
                        "author": "carol",
                        "title": "Notes",
                        "comments": [{"id": 961, "author": BOT, "body": "Carol's thread."}],
                    }
                ],
            },
        ],
    }


def request(actor: str = "bob", comment_id: str = "503", **overrides: Any) -> GoAwayRequest:
    fields: dict[str, Any] = {
        "jobid": f"alice-widgets-ic-{actor}-{comment_id}",
        "actor": actor,
        "repo": "alice/widgets",
        "trust_level": "collaborator",
        "comment_id": comment_id,
        "comment_url": f"https://github.com/alice/widgets/issues/1#issuecomment-{comment_id}",
        "comment_type": "issue_comment",
        "timestamp": AT,
    }
    return GoAwayRequest(**{**fields, **overrides})


def open_fork_pull(gateway: Gateway) -> dict[str, Any]:
    """The bot's pull request from its fork, opened as the agent would."""
    return dict(
        gateway.post(
            "/repos/alice/widgets/pulls",
            json={"title": "Fix the README typo", "head": f"{BOT}:main", "base": "main"},
        ).body
    )
