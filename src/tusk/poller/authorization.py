"""Who may trigger work, and how much the repository trusts them (MISSION P3).

Only logins in ``allowed_users`` start agent work. The trust level is
decided by ``tusk.github.trust``: the collaborator-permission endpoint when the
bot may read it, otherwise the trigger's ``author_association`` (the
endpoint answers 403 to a caller without push access, the bot's usual
case). The decision records which source decided.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from tusk.github import trust
from tusk.github.gateway import Forbidden, Gateway, NotFound
from tusk.github.trust import TrustDecision

log = logging.getLogger(__name__)


def is_allowed(login: str, allowed_users: Iterable[str]) -> bool:
    return login.lower() in {user.lower() for user in allowed_users}


def fetch_trust(
    gateway: Gateway, *, repo: str, login: str, association: str | None
) -> TrustDecision:
    """Ask GitHub for ``login``'s permission on ``repo``; the owner needs no request.

    403 (no push access: "Must have push access to view collaborator
    permission.", yegor256/rultor#1407) and 404 (the repository or user is
    not visible to the bot) fall back on ``association``, the trigger's own
    ``author_association``. Other failures raise: the thread stays unread
    and the next poll asks again.
    """
    if trust.owns(repo, login):
        return trust.from_association(repo, login, association)
    try:
        body = gateway.get(f"/repos/{repo}/collaborators/{login}/permission")
    except (Forbidden, NotFound) as error:  # a rate limit is neither: it raises
        decision = trust.from_association(repo, login, association)
        log.info(
            "permission of %s on %s not readable (%s); author_association %s: %s",
            login,
            repo,
            error.status,
            association or "missing",
            decision.level,
        )
        return decision
    return trust.from_permission(repo, login, body if isinstance(body, dict) else {})
