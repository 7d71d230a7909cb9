"""How much a repository trusts an author, and which source said so (MISSION P3, G1).

One pure decision shared by the poller (the trust level a run records) and
go-away (whether the author may send the bot away from the repository), so
both always give the same answer for the same facts.

Sources, best first:

1. ``repository_owner``: the author owns the repository (no request).
2. ``permission_endpoint``: ``GET /repos/{o}/{r}/collaborators/{u}/permission``
   answered; write, maintain or admin make a collaborator.
3. ``author_association``: that endpoint was not readable. GitHub answers it
   403 "Must have push access to view collaborator permission." when the
   caller lacks push access (yegor256/rultor#1407), which is the bot's normal
   case: it works in forks. Every issue, comment, review and discussion
   carries ``author_association`` (OpenAPI schema ``author-association``);
   ``OWNER``, ``MEMBER`` and ``COLLABORATOR`` make a collaborator. It can only
   err narrow: a member whose organisation membership is private shows up as
   ``CONTRIBUTOR`` or ``NONE`` (actions/github-script#643), i.e. external.
4. ``none``: neither was available; the author is external (never assumed).

The trust level never authorizes work: ``allowed_users`` does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tusk.contracts.models import TrustLevel, TrustSource

COLLABORATOR_PERMISSIONS = frozenset({"admin", "maintain", "write"})
COLLABORATOR_ASSOCIATIONS = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})


@dataclass(frozen=True)
class TrustDecision:
    level: TrustLevel
    source: TrustSource
    detail: str = ""  # e.g. the role or association that decided, for logs and reports

    @property
    def trusted(self) -> bool:
        """Owner or collaborator: may send the bot away from the repository itself (G1)."""
        return self.level in ("owner", "collaborator")


def owns(repo: str, login: str) -> bool:
    return repo.split("/", 1)[0].lower() == login.lower()


def from_permission(repo: str, login: str, answer: Mapping[str, Any]) -> TrustDecision:
    """The permission endpoint's answer (``permission`` folds maintain into write)."""
    if owns(repo, login):
        return TrustDecision("owner", "repository_owner", "owns the repository")
    role = str(answer.get("role_name") or "").lower()
    permission = str(answer.get("permission") or "").lower()
    shown = role or permission or "none"
    if role in COLLABORATOR_PERMISSIONS or permission in COLLABORATOR_PERMISSIONS:
        return TrustDecision("collaborator", "permission_endpoint", shown)
    return TrustDecision("external", "permission_endpoint", shown)


def from_association(repo: str, login: str, association: str | None) -> TrustDecision:
    """The trigger's ``author_association``, used when the endpoint was not readable."""
    if owns(repo, login):
        return TrustDecision("owner", "repository_owner", "owns the repository")
    if not association:
        return TrustDecision("external", "none", "no author_association to read")
    value = association.upper()
    level: TrustLevel = "collaborator" if value in COLLABORATOR_ASSOCIATIONS else "external"
    return TrustDecision(level, "author_association", value)


def decide(
    repo: str,
    login: str,
    *,
    permission: Mapping[str, Any] | None,
    association: str | None,
) -> TrustDecision:
    """``permission`` is the endpoint's answer, or None when it could not be read."""
    if permission is not None:
        return from_permission(repo, login, permission)
    return from_association(repo, login, association)
