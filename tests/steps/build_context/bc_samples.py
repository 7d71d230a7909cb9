"""Context documents for build-context tests: minimal REST-shaped ``raw`` payloads."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from tusk.contracts.config import Settings
from tusk.contracts.models import ContextDocument, PermissionConfig, Trigger

T0 = datetime(2026, 11, 30, 6, 0, tzinfo=UTC)
TRIGGER_AT = T0 + timedelta(hours=5)
REPO = "alice/widgets"


def at(minutes: int) -> str:
    return (T0 + timedelta(minutes=minutes)).isoformat().replace("+00:00", "Z")


def settings(**limits: Any) -> Settings:
    return Settings.model_validate(
        {
            "bot": "tusk-bot",
            "control_repo": "alice/tusk-control",
            "allowed_users": ["alice"],
            "limits": {"context_chars": 60000, **limits},
        }
    )


def comment(
    cid: int,
    body: str,
    *,
    login: str = "alice",
    minutes: int | None = None,
    updated: int | None = None,
    association: str = "OWNER",
) -> dict[str, Any]:
    created = at(minutes if minutes is not None else cid)
    return {
        "id": cid,
        "user": {"login": login},
        "body": body,
        "created_at": created,
        "updated_at": at(updated) if updated is not None else created,
        "html_url": f"https://github.com/{REPO}/issues/7#issuecomment-{cid}",
        "author_association": association,
    }


def issue(number: int = 7, body: str = "The widget is broken.", **extra: Any) -> dict[str, Any]:
    return {
        "number": number,
        "title": "Widget breaks on resize",
        "body": body,
        "user": {"login": "alice"},
        "author_association": "OWNER",
        "state": "open",
        "labels": [{"name": "bug"}],
        "assignees": [],
        "created_at": at(0),
        "updated_at": at(0),
        "html_url": f"https://github.com/{REPO}/issues/{number}",
        **extra,
    }


def trigger_comment(cid: int = 9000, body: str = "@tusk-bot please fix the resize bug") -> dict:
    return comment(cid, body, minutes=300)


def document(
    raw: dict[str, Any],
    *,
    trigger_type: str = "issue_comment",
    trigger_id: str = "9000",
    trigger_body: str = "@tusk-bot please fix the resize bug",
    review_id: int | None = None,
    jobid: str = "alice-widgets-9000",
    number: int = 7,
) -> ContextDocument:
    return ContextDocument(
        jobid=jobid,
        repo=REPO,
        actor="alice",
        trust_level="owner",
        permission_config=PermissionConfig(),
        trigger=Trigger(
            type=trigger_type,  # type: ignore[arg-type]
            id=trigger_id,
            url=f"https://github.com/{REPO}/issues/{number}#issuecomment-{trigger_id}",
            number=number,
            author="alice",
            body=trigger_body,
            created_at=TRIGGER_AT,
            review_id=review_id,
        ),
        raw=raw,
        timestamp=TRIGGER_AT + timedelta(minutes=1),
    )


def issue_document(comments: list[dict[str, Any]], **kwargs: Any) -> ContextDocument:
    return document(
        {"kind": "issue", "thread": issue(), "comments": [*comments, trigger_comment()]}, **kwargs
    )
