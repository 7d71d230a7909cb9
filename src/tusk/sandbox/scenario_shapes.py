"""The shape of a scenario document: each key's expected type, and the check that
names every unknown key, missing key and wrong type with its key path."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tusk.sandbox.world_clock import parse_time

# YAML reads an unquoted timestamp as a datetime; both spellings are accepted.
TIME = (str, datetime)
REACTIONS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")
ANY = object()

# Each shape: key -> expected type (a type, a tuple of types, a nested shape
# dict, or [shape] for a list of that shape). Keys ending in "!" are required.
COMMENT = {
    "author!": str,
    "body!": str,
    "id": int,
    "created_at": TIME,
    "updated_at": TIME,
    "reactions": dict,
}
REVIEW_COMMENT = {
    "author": str,
    "body!": str,
    "path!": str,
    "line": int,
    "side": str,
    "id": int,
    "created_at": TIME,
    "in_reply_to": int,
}
REVIEW = {
    "author!": str,
    "body": str,
    "state": str,
    "id": int,
    "submitted_at": TIME,
    "comments": [REVIEW_COMMENT],
}
ISSUE = {
    "number": int,
    "id": int,
    "author!": str,
    "title!": str,
    "body": (str, type(None)),
    "state": str,
    "state_reason": (str, type(None)),
    "labels": [str],
    "assignees": [str],
    "milestone": str,
    "locked": bool,
    "created_at": TIME,
    "comments": [COMMENT],
    "reactions": dict,
}
PULL = {
    **ISSUE,
    "head!": str,
    "base": str,
    "files": dict,
    "draft": bool,
    "merged": bool,
    "reviews": [REVIEW],
    "review_comments": [REVIEW_COMMENT],
}
DISCUSSION_REPLY = {"author!": str, "body!": str, "id": int, "created_at": TIME}
DISCUSSION_COMMENT = {**DISCUSSION_REPLY, "replies": [DISCUSSION_REPLY]}
DISCUSSION = {
    "number": int,
    "id": int,
    "author!": str,
    "title!": str,
    "body": str,
    "category": str,
    "closed": bool,
    "created_at": TIME,
    "comments": [DISCUSSION_COMMENT],
}
BRANCH = {"name!": str, "from": str, "files": dict, "message": str, "protected": (bool, dict)}
LABEL = {"name!": str, "color": str, "description": str, "default": bool}
ARTIFACT = {"name!": str, "files": dict, "run_id": int, "expired": bool}
WORKFLOW_RUN = {
    "workflow!": str,
    "created_at!": TIME,
    "event": str,
    "status": str,
    "conclusion": str,
}
REPO = {
    "name!": str,
    "id": int,
    "private": bool,
    "default_branch": str,
    "description": (str, type(None)),
    "collaborators": dict,
    "contributors": [str],  # logins with commits in it: author_association CONTRIBUTOR
    "fork_of": str,
    "archived": bool,
    "has_discussions": bool,
    "branches": [BRANCH],
    "files": dict,
    "labels": [(str, LABEL)],
    "issues": [ISSUE],
    "pulls": [PULL],
    "discussions": [DISCUSSION],
    "artifacts": [ARTIFACT],
    "workflow_runs": [WORKFLOW_RUN],
    "secrets": [str],  # names of the repository's Actions secrets
    "disabled_workflows": [str],  # workflow file paths GitHub shows as disabled_manually
    "renamed_from": [str],  # former names (owner/name): GitHub redirects them by id
}
# ``members``: for a user of type Organization, the logins that belong to it.
USER = {"login!": str, "id": int, "type": str, "name": str, "email": str, "members": [str]}
TOKEN = {
    "user!": str,
    "scopes": [str],
    "read_only": bool,
    "repository": str,  # a workflow's GITHUB_TOKEN, for this repository only
    "permissions": dict,  # its `permissions:`, e.g. {contents: write}
}
SETTINGS = {
    "fork_ready_after_reads": int,
    "fork_git_ready_after_requests": int,
    "listing_lag_seconds": (int, float),
    "listing_lags_seconds": [(int, float)],
    "comment_listing_lag_seconds": (int, float),
    "mark_read_late_listings": int,
    "page_size": int,
    "discussion_subject_url": bool,
    "fork_deletion_closes_pulls": bool,
    "secondary_limits": (bool, dict),
}
SCENARIO = {"now": TIME, "settings": SETTINGS, "users": [USER], "tokens": dict, "repos": [REPO]}


def check_shape(value: Any, shape: Any, where: str, problems: list[str]) -> None:
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            problems.append(
                f"{where or 'scenario'}: expected a mapping, got {type(value).__name__}"
            )
            return
        keys = {k.rstrip("!"): k.endswith("!") for k in shape}
        for key in value:
            if key not in keys:
                problems.append(
                    f"{_join(where, key)}: unknown key (known: {', '.join(sorted(keys))})"
                )
        for key, required in keys.items():
            if required and key not in value:
                problems.append(f"{_join(where, key)}: required")
        for key, sub in shape.items():
            name = key.rstrip("!")
            if name in value:
                check_shape(value[name], sub, _join(where, name), problems)
        return
    if isinstance(shape, list):
        if not isinstance(value, list):
            problems.append(f"{where}: expected a list, got {type(value).__name__}")
            return
        for index, item in enumerate(value):
            check_shape(item, shape[0], f"{where}[{index}]", problems)
        return
    if shape is TIME and isinstance(value, str):
        try:
            parse_time(value)
        except ValueError:
            problems.append(f"{where}: {value!r} is not an ISO 8601 time")
        return
    if isinstance(shape, tuple):
        if any(isinstance(s, dict) for s in shape) and isinstance(value, dict):
            check_shape(value, next(s for s in shape if isinstance(s, dict)), where, problems)
            return
        if not isinstance(value, tuple(s for s in shape if isinstance(s, type))):
            problems.append(f"{where}: unexpected type {type(value).__name__}")
        return
    if shape is int and isinstance(value, bool):
        problems.append(f"{where}: expected an integer")
    elif not isinstance(value, shape):
        problems.append(f"{where}: expected {shape.__name__}, got {type(value).__name__}")


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key
