"""The fetched GraphQL data in the shape of GitHub's REST API: ``ContextDocument.raw``.

Pure. The layout is the contract ``tusk.contracts.raw_context.RawContext``
(one spelling, REST's field names): this module only maps GraphQL's names
onto it, and the model refuses anything it does not define.
"""

from __future__ import annotations

from typing import Any

from tusk.contracts.raw_context import RawContext, ThreadKind


def _user(node: dict[str, Any] | None) -> dict[str, Any] | None:
    """REST's ``user`` object: login and type ("Bot" for app accounts); None for ghosts."""
    author = (node or {}).get("author")
    if not author:
        return None
    return {
        "login": author.get("login"),
        "type": "Bot" if author.get("__typename") == "Bot" else "User",
    }


def viewer_reactions(node: dict[str, Any]) -> list[str]:
    """The reactions the viewer (the bot) left on ``node``, in REST's spelling."""
    rest = {"THUMBS_UP": "+1", "THUMBS_DOWN": "-1"}
    return [
        rest.get(str(group.get("content")), str(group.get("content")).lower())
        for group in node.get("reactionGroups") or []
        if group and group.get("viewerHasReacted")
    ]


def _lower(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


def comment(node: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": node.get("databaseId"),
        "node_id": node.get("id"),
        "user": _user(node),
        "author_association": node.get("authorAssociation"),
        "body": node.get("body") or "",
        "created_at": node.get("createdAt"),
        "updated_at": node.get("updatedAt"),
        "html_url": node.get("url"),
        "viewer_reactions": viewer_reactions(node),
    }


def _objects(nodes: Any, key: str) -> list[dict[str, Any]]:
    return [{key: node[key]} for node in nodes or [] if node and node.get(key)]


def _branches(nodes: Any) -> list[dict[str, Any]]:
    out = []
    for node in nodes or []:
        target = node.get("target") or {}
        out.append(
            {
                "name": node.get("name"),
                "sha": target.get("oid"),
                "committed_at": target.get("committedDate"),
                "message": target.get("messageHeadline"),
            }
        )
    return out


def repo_meta(node: dict[str, Any]) -> dict[str, Any]:
    return {
        "full_name": node.get("nameWithOwner"),
        "description": node.get("description"),
        "private": node.get("isPrivate"),
        "fork": node.get("isFork"),
        "parent": (node.get("parent") or {}).get("nameWithOwner"),
        "default_branch": (node.get("defaultBranchRef") or {}).get("name"),
        "html_url": node.get("url"),
        "pushed_at": node.get("pushedAt"),
        "updated_at": node.get("updatedAt"),
        "stars": node.get("stargazerCount"),
    }


def _issue_common(node: dict[str, Any]) -> dict[str, Any]:
    return {
        "node_id": node.get("id"),
        "number": node.get("number"),
        "title": node.get("title"),
        "body": node.get("body") or "",
        "user": _user(node),
        "author_association": node.get("authorAssociation"),
        "state": _lower(node.get("state")),
        "state_reason": _lower(node.get("stateReason")),
        "html_url": node.get("url"),
        "created_at": node.get("createdAt"),
        "updated_at": node.get("updatedAt"),
        # The body's own edit time: ``updated_at`` moves with every comment or label.
        "last_edited_at": node.get("lastEditedAt"),
        "closed_at": node.get("closedAt"),
        "labels": _objects(node.get("labels"), "name"),
        "viewer_reactions": viewer_reactions(node),
    }


def to_raw(
    *,
    kind: ThreadKind,
    repo: str,
    repository: dict[str, Any],
    thread: dict[str, Any],
    fork: dict[str, Any] | None,
    viewer: dict[str, Any],
    diff: str | None,
    protection: dict[str, Any],
    notes: list[str],
) -> RawContext:
    """Pure: the fetched GraphQL data (connections already flattened) in REST's shape."""
    out_thread = _issue_common(thread)
    comments = [comment(node) for node in thread.get("comments") or []]
    if kind == "discussion":
        out_thread.update(
            state="closed" if thread.get("closed") else "open",
            answered=thread.get("isAnswered"),
            category=(thread.get("category") or {}).get("name"),
        )
        # Replies join the comment list, each saying which comment it answers.
        for node in thread.get("comments") or []:
            for reply in node.get("replies") or []:
                comments.append({**comment(reply), "in_reply_to_id": node.get("databaseId")})
        comments.sort(key=lambda c: (c.get("created_at") or "", str(c.get("id"))))
    else:
        out_thread.update(
            assignees=_objects(thread.get("assignees"), "login"),
            milestone=_milestone(thread.get("milestone")),
        )
    raw: dict[str, Any] = {
        "kind": kind,
        "repository": _repository(repository, repo, protection),
        "thread": out_thread,
        "comments": comments,
        "reviews": [],
        "review_comments": [],
        "linked_issues": [],
        "diff": diff,
        "bot": {
            "login": viewer.get("login"),
            "repositories": [repo_meta(node) for node in viewer.get("repositories") or []],
            "fork": _fork(fork, repo),
        },
        "notes": notes,
    }
    if kind == "pull_request":
        _add_pull_request(raw, thread)
    return RawContext.model_validate(raw)


def _repository(
    repository: dict[str, Any], repo: str, protection: dict[str, Any]
) -> dict[str, Any]:
    return {
        **repo_meta(repository),
        "full_name": repository.get("nameWithOwner") or repo,
        "branches": _branches(repository.get("refs")),
        "protection": protection or None,
    }


def _milestone(node: dict[str, Any] | None) -> dict[str, Any] | None:
    if not node:
        return None
    return {"number": node.get("number"), "title": node.get("title"), "due_on": node.get("dueOn")}


def _fork(node: dict[str, Any] | None, upstream: str) -> dict[str, Any] | None:
    if not node or not node.get("isFork"):
        return None
    if ((node.get("parent") or {}).get("nameWithOwner") or "").lower() != upstream.lower():
        return None
    return {**repo_meta(node), "branches": _branches(node.get("refs"))}


def _add_pull_request(raw: dict[str, Any], node: dict[str, Any]) -> None:
    reviews = node.get("reviews") or []
    review_comments = []
    for review in reviews:
        for item in review.get("comments") or []:
            review_comments.append(
                {
                    **comment(item),
                    "pull_request_review_id": review.get("databaseId"),
                    "path": item.get("path"),
                    "line": item.get("line"),
                    "diff_hunk": item.get("diffHunk"),
                    "in_reply_to_id": (item.get("replyTo") or {}).get("databaseId"),
                }
            )
    review_comments.sort(key=lambda c: (c.get("created_at") or "", c.get("id") or 0))
    raw["thread"].update(
        draft=node.get("isDraft"),
        merged=node.get("merged"),
        merged_at=node.get("mergedAt"),
        mergeable=_lower(node.get("mergeable")),
        head={
            "ref": node.get("headRefName"),
            "sha": node.get("headRefOid"),
            "repo": (node.get("headRepository") or {}).get("nameWithOwner"),
        },
        base={
            "ref": node.get("baseRefName"),
            "sha": node.get("baseRefOid"),
            "repo": (node.get("baseRepository") or {}).get("nameWithOwner"),
        },
    )
    raw["reviews"] = [
        {
            "id": review.get("databaseId"),
            "node_id": review.get("id"),
            "user": _user(review),
            "author_association": review.get("authorAssociation"),
            "state": _lower(review.get("state")),
            "body": review.get("body") or "",
            "submitted_at": review.get("submittedAt") or review.get("createdAt"),
            "updated_at": review.get("updatedAt"),
            "html_url": review.get("url"),
            "viewer_reactions": viewer_reactions(review),
        }
        for review in reviews
    ]
    raw["review_comments"] = review_comments
    raw["linked_issues"] = [
        {
            "repo": (issue.get("repository") or {}).get("nameWithOwner"),
            "issue": _issue_common(issue),
            "comments": [comment(c) for c in issue.get("comments") or []],
        }
        for issue in node.get("closingIssuesReferences") or []
    ]
