"""The state each recording implies, as a local GitHub scenario.

A recording starts from a GitHub that had something in it: ``paginate-issues``
lists thirteen issues three a page, ``search-issues`` finds two that say
"sesame", ``rename-repository`` reads a repository by its old name. Each seed
here is that state, so the replay (``tusk.sandbox.recorded_replay``) asks the
stand-in what the recording asked GitHub. The normalised recordings authenticate
with two zeroed tokens: user a's and user b's.
"""

from __future__ import annotations

import copy
from typing import Any

ORG = "octokit-fixture-org"
USER_A = "octokit-fixture-user-a"
USER_B = "octokit-fixture-user-b"
TOKEN_A = "0" * 39 + "1"
TOKEN_B = "0" * 39 + "2"
ALL_SCOPES = ["repo", "delete_repo", "notifications", "workflow", "admin:org", "user"]

# GitHub's labels of every new repository (docs.github.com/en/issues/using-labels-and-
# milestones-to-track-work/managing-labels#about-default-labels), as the recording lists.
DEFAULT_LABELS = [
    ("bug", "d73a4a", "Something isn't working"),
    ("documentation", "0075ca", "Improvements or additions to documentation"),
    ("duplicate", "cfd3d7", "This issue or pull request already exists"),
    ("enhancement", "a2eeef", "New feature or request"),
    ("good first issue", "7057ff", "Good for newcomers"),
    ("help wanted", "008672", "Extra attention is needed"),
    ("invalid", "e4e669", "This doesn't seem right"),
    ("question", "d876e3", "Further information is requested"),
    ("wontfix", "ffffff", "This will not be worked on"),
]

BASE: dict[str, Any] = {
    "users": [
        {"login": ORG, "type": "Organization", "members": [USER_A, USER_B]},
        {"login": USER_A},
        {"login": USER_B},
    ],
    "tokens": {
        TOKEN_A: {"user": USER_A, "scopes": ALL_SCOPES},
        TOKEN_B: {"user": USER_B, "scopes": ALL_SCOPES},
    },
}


# Tusk's own recordings (``tusk record``) name their accounts this way.
RECORD_ORG = "tusk-fixture-org"
RECORD_USER = "tusk-fixture-user"
RECORD_BASE: dict[str, Any] = {
    "users": [
        {"login": RECORD_ORG, "type": "Organization", "members": [RECORD_USER]},
        {"login": RECORD_USER},
    ],
    "tokens": {TOKEN_A: {"user": RECORD_USER, "scopes": ALL_SCOPES}},
    "repos": [
        {
            "name": f"{RECORD_ORG}/record",
            "collaborators": {RECORD_USER: "admin"},
            "files": {"README.md": "# record"},
        },
        {"name": f"{RECORD_USER}/record", "files": {"README.md": "# record"}},
    ],
}
RECORDED_BY_TUSK = (
    "tusk-notifications-conditional",
    "tusk-issue-comments",
    "tusk-reactions",
    "tusk-graphql-discussions",
    "tusk-dispatches",
)


def repo(name: str, **more: Any) -> dict[str, Any]:
    """A repository of the fixtures' organisation that user a administers."""
    return {"name": f"{ORG}/{name}", "collaborators": {USER_A: "admin"}, **more}


def issue(number: int, title: str, body: str | None = None) -> dict[str, Any]:
    return {"number": number, "author": USER_A, "title": title, "body": body}


REPOS: dict[str, list[dict[str, Any]]] = {
    "add-labels-to-issue": [repo("add-labels-to-issue")],
    "labels": [
        repo(
            "labels",
            labels=[
                {"name": n, "color": c, "description": d, "default": True}
                for n, c, d in DEFAULT_LABELS
            ],
        )
    ],
    "errors": [repo("errors")],
    "paginate-issues": [
        repo(
            "paginate-issues",
            id=1000,
            issues=[issue(n, f"Test issue {n}") for n in range(1, 14)],
        )
    ],
    "search-issues": [
        repo(
            "search-issues",
            issues=[
                issue(1, "Does not match"),
                issue(2, "Open sesame", "sesame"),
                issue(3, "Sesame street", "sesame"),
            ],
        )
    ],
    "get-repository": [repo("hello-world", files={"README.md": "# hello-world"})],
    "get-content": [
        repo("hello-world", default_branch="master", files={"README.md": "# hello-world"})
    ],
    "create-file": [repo("create-file", files={"README.md": "# create-file"})],
    "create-status": [repo("create-status", files={"README.md": "# create-status"})],
    "add-and-remove-repository-collaborator": [repo("add-and-remove-repository-collaborator")],
    "mark-notifications-as-read": [],
    "branch-protection": [repo("branch-protection", files={"README.md": "# protected"})],
    "rename-repository": [repo("rename-repository", id=1000)],
}


# Names in a recording the stand-in cannot reproduce, replaced before it is asked:
# the recording's zeroed commit SHA by the branch it stands for.
REWRITES: dict[str, dict[str, str]] = {
    "create-status": {"0" * 39 + "1": "main"},
}


def seed(scenario: str) -> dict[str, Any] | None:
    """The local GitHub scenario a recording implies; None for one nobody seeded (its
    operations are ones Tusk neither calls nor the stand-in serves)."""
    if scenario in RECORDED_BY_TUSK:
        return copy.deepcopy(RECORD_BASE)
    repos = REPOS.get(scenario)
    if repos is None:
        return None
    return {**copy.deepcopy(BASE), "repos": copy.deepcopy(repos)}
