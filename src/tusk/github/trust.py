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
   ``OWNER``, ``MEMBER`` and ``COLLABORATOR`` make a collaborator. It errs
   **broad**: ``COLLABORATOR`` means "invited to collaborate on the
   repository" with any role, read and triage included, and ``MEMBER`` any
   member of the organisation that owns it, whatever its base permission
   (GraphQL ``CommentAuthorAssociation``); so one person can be a collaborator
   by association and external by the endpoint. (It also errs narrow: a
   private organisation membership shows as ``CONTRIBUTOR`` or ``NONE``,
   actions/github-script#643.) Such a level says so (``describe``:
   "collaborator, by association: role not visible") and is used only where
   erring broad is the safe side: a go-away's scope (the bot leaves the
   repository). Nothing that widens what the agent may do rests on it, and
   nothing that acts on other people's work: undo, stop, discard and apply are
   decided by ``tusk.github.rights``, which never reads it.
4. ``none``: neither was available; the author is external (never assumed).

The trust level never authorizes work or widens a run's rights:
``allowed_users`` decides who starts work, ``tusk.yml`` and the permission
marker what the run may write.
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
        """Owner or collaborator: may send the bot away from the repository itself (G1).
        By association this errs broad, which for leaving is the safe side."""
        return self.level in ("owner", "collaborator")

    def describe(self) -> str:
        """The level with what it rests on, as the log issue and go-away report show it."""
        return shown(self.level, self.source, self.detail)


def shown(level: str, source: str, detail: str = "") -> str:
    """``level`` in words that say what is known: "collaborator, by association: role not
    visible" when only ``author_association`` decided (pure)."""
    said = f" ({detail})" if detail else ""
    if source == "author_association":
        if level == "collaborator":
            return f"collaborator, by association{said}: role not visible"
        return f"{level}, by association{said}"
    if source == "permission_endpoint" and detail:
        return f"{level} (role {detail})"
    return level


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
