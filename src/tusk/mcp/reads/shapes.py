"""What a read returns: GitHub's payload cut to the fields an agent needs, its text neutralised.

Every text from GitHub goes through ``tusk.text.neutralise`` first, the same
function ``context.md`` is built with: prose loses its hidden HTML comments,
prose and code show invisible characters as ``⟦U+…⟧``, one-line fields cannot
break a line, and an item by an untrusted author carries ``flags`` saying so.
Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tusk.text.neutralise import Trust, neutralise, one_line


def user_of(data: Any) -> str | None:
    return data.get("login") if isinstance(data, Mapping) else None


def line_field(value: Any) -> Any:
    """A one-line field, neutralised; non-text values (None, numbers) pass through."""
    return one_line(value) if isinstance(value, str) else value


def code_field(value: Any) -> Any:
    return neutralise(value, code=True).text if isinstance(value, str) else value


def prose(
    item: Mapping[str, Any],
    trust: Trust,
    *,
    text_key: str = "body",
    author: str | None = None,
    line: bool = False,
) -> dict[str, Any]:
    """An item's author, its neutralised text and, when there is anything to say, its flags."""
    login = author if author is not None else user_of(item.get("user"))
    cleaned = neutralise(
        item.get(text_key) if isinstance(item.get(text_key), str) else None,
        trusted=trust.trusted(login, item.get("author_association")),
    )
    text = " ".join(cleaned.text.split()) if line else cleaned.text
    out: dict[str, Any] = {"author": login, text_key: text}
    if cleaned.flags:
        out["flags"] = list(cleaned.flags)
    return out


def slim_issue(issue: Mapping[str, Any], trust: Trust) -> dict[str, Any]:
    return {
        "number": issue.get("number"),
        "title": line_field(issue.get("title")),
        "state": issue.get("state"),
        "state_reason": issue.get("state_reason"),
        "labels": [
            line_field(label.get("name"))
            for label in issue.get("labels") or []
            if isinstance(label, Mapping)
        ],
        "assignees": [user_of(a) for a in issue.get("assignees") or []],
        "is_pull_request": "pull_request" in issue,
        "comments": issue.get("comments"),
        "created_at": issue.get("created_at"),
        "updated_at": issue.get("updated_at"),
        "url": issue.get("html_url"),
        **prose(issue, trust),
    }


def slim_comment(comment: Mapping[str, Any], trust: Trust) -> dict[str, Any]:
    return {
        "id": comment.get("id"),
        "created_at": comment.get("created_at"),
        "updated_at": comment.get("updated_at"),
        "url": comment.get("html_url"),
        **prose(comment, trust),
    }


def slim_repo(data: Mapping[str, Any]) -> dict[str, Any]:
    parent = data.get("parent") or {}
    return {
        "full_name": data.get("full_name"),
        "description": line_field(data.get("description")),
        "private": data.get("private"),
        "fork": data.get("fork"),
        "parent": parent.get("full_name") if parent else None,
        "default_branch": data.get("default_branch"),
        "archived": data.get("archived"),
        "open_issues_count": data.get("open_issues_count"),
        "pushed_at": data.get("pushed_at"),
        "url": data.get("html_url"),
    }


def discussion_node(node: Mapping[str, Any], trust: Trust) -> dict[str, Any]:
    """A discussion, comment or reply as GraphQL gave it, its text neutralised."""
    out = {k: v for k, v in node.items() if k not in ("author", "authorAssociation", "body")}
    out.update(
        prose(
            {"body": node.get("body"), "author_association": node.get("authorAssociation")},
            trust,
            author=user_of(node.get("author")) or "",
        )
    )
    if "title" in out:
        out["title"] = line_field(out["title"])
    if isinstance(out.get("category"), Mapping):
        out["category"] = {"name": line_field(out["category"].get("name"))}
    for key in ("comments", "replies"):
        if isinstance(node.get(key), Mapping):
            out[key] = {
                **node[key],
                "nodes": [discussion_node(n, trust) for n in node[key].get("nodes") or []],
            }
    return out
