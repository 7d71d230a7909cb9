"""Who may trigger work, and how much the repository trusts them (MISSION P3).

Only logins in ``allowed_users`` start agent work. The trust level is read
from the collaborator-permission endpoint, never from ``author_association``
(which hides private org membership): ``owner`` owns the repository,
``collaborator`` has write, maintain or admin, everyone else is ``external``.
When the endpoint cannot be read (the bot lacks push access, the user is
unknown) the answer is ``external``: trust is never assumed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from tusk.contracts import TrustLevel
from tusk.github import Gateway, GitHubError

log = logging.getLogger(__name__)

COLLABORATOR_PERMISSIONS = frozenset({"admin", "maintain", "write"})


def is_allowed(login: str, allowed_users: Iterable[str]) -> bool:
    return login.lower() in {user.lower() for user in allowed_users}


def trust_level(
    *, repo: str, login: str, permission: str | None, role_name: str | None = None
) -> TrustLevel:
    """Pure: the trust level from the repository name and the permission endpoint's answer."""
    if repo.split("/", 1)[0].lower() == login.lower():
        return "owner"
    if (permission or "").lower() in COLLABORATOR_PERMISSIONS:
        return "collaborator"
    if (role_name or "").lower() in COLLABORATOR_PERMISSIONS:
        return "collaborator"
    return "external"


def fetch_trust_level(gateway: Gateway, *, repo: str, login: str) -> TrustLevel:
    """Ask GitHub for ``login``'s permission on ``repo``; the owner needs no request."""
    if trust_level(repo=repo, login=login, permission=None) == "owner":
        return "owner"
    try:
        body = gateway.get(f"/repos/{repo}/collaborators/{login}/permission")
    except GitHubError as error:
        if error.status in (403, 404):
            log.warning("permission of %s on %s not visible (%s); external", login, repo, error)
            return "external"
        raise
    body = body if isinstance(body, dict) else {}
    return trust_level(
        repo=repo, login=login, permission=body.get("permission"), role_name=body.get("role_name")
    )
