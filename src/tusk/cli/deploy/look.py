"""``tusk init --apply``: what GitHub has of the deployment, read with the owner's token
(the owner sees everything of the control repository, the bot may not see it yet)."""

from __future__ import annotations

import base64
from dataclasses import replace

from tusk.cli.deploy.plan import (
    NO_ACCOUNT,
    NOTHING,
    ORG_MEMBER,
    ORG_OUTSIDER,
    OTHER_USER,
    YOURS,
    Seen,
    Wanted,
)
from tusk.contracts.config import Settings
from tusk.github.gateway import Forbidden, Gateway, NotFound
from tusk.issues.state import StateStore
from tusk.issues.state_codec import StateKind


def look(owner: Gateway, wanted: Wanted, settings: Settings) -> Seen:
    """Everything the plan compares, one listing per kind of thing."""
    repo = wanted.repo
    unknown = unknown_users(owner, wanted.allowed_users)
    try:
        body = owner.get(f"/repos/{repo}")
    except NotFound:
        return replace(NOTHING, account=account(owner, wanted), unknown_users=unknown)
    return Seen(
        repo_exists=True,
        owner_admin=bool((body.get("permissions") or {}).get("admin")),
        private=bool(body.get("private")),
        unknown_users=unknown,
        config_text=file_text(owner, repo, wanted.config),
        files={path: sha for path in wanted.files if (sha := file_sha(owner, repo, path))},
        labels=frozenset(
            str(label["name"]).lower() for label in owner.paginate(f"/repos/{repo}/labels")
        ),
        state_kinds=state_kinds(owner, settings, wanted.state_kinds),
        bot_can_push=bot_can_push(owner, repo, wanted.bot),
        bot_invited=bot_invited(owner, repo, wanted.bot),
        secrets=frozenset(
            str(secret["name"])
            for secret in owner.paginate(f"/repos/{repo}/actions/secrets", item_key="secrets")
        ),
        workflows=workflow_states(owner, repo),
    )


def unknown_users(gateway: Gateway, logins: tuple[str, ...]) -> frozenset[str]:
    """The logins GitHub has no user for (lower case)."""
    unknown = set()
    for login in logins:
        try:
            gateway.get(f"/users/{login}")
        except NotFound:
            unknown.add(login.lower())
    return frozenset(unknown)


def account(gateway: Gateway, wanted: Wanted) -> str:
    """Where a new control repository would go, as the owner's token stands to it."""
    owner, me = wanted.repo.split("/")[0], wanted.owner_login
    try:
        body = gateway.get(f"/users/{owner}")
    except NotFound:
        return NO_ACCOUNT
    if body.get("type") == "Organization":
        try:  # 204 for a member; 404 (or a redirect to the public check) for anyone else
            gateway.request("GET", f"/orgs/{owner}/members/{me}")
        except (NotFound, Forbidden):
            return ORG_OUTSIDER
        return ORG_MEMBER
    return YOURS if owner.lower() == me.lower() else OTHER_USER


def file_text(gateway: Gateway, repo: str, path: str) -> str | None:
    """The text of ``path`` on the default branch, or None."""
    try:
        body = gateway.get(f"/repos/{repo}/contents/{path}")
    except NotFound:
        return None
    if not isinstance(body, dict) or body.get("type") != "file":
        return None
    return base64.b64decode(body.get("content") or "").decode("utf-8", errors="replace")


def file_sha(gateway: Gateway, repo: str, path: str) -> str | None:
    """The blob sha of ``path`` on the default branch, or None (no such file, empty repo)."""
    try:
        body = gateway.get(f"/repos/{repo}/contents/{path}")
    except NotFound:
        return None
    if not isinstance(body, dict) or body.get("type") != "file":
        return None
    return str(body["sha"])


def state_kinds(gateway: Gateway, settings: Settings, kinds: tuple[str, ...]) -> frozenset[str]:
    """The state issues that exist, found as every reader finds them (the bot's only)."""
    store = StateStore(gateway, settings)
    found: list[StateKind] = ["history", "memory", "blocklist"]
    return frozenset(
        kind for kind in found if kind in kinds and store.state_issue(kind, create=False)
    )


def bot_can_push(gateway: Gateway, repo: str, bot: str) -> bool:
    try:
        body = gateway.get(f"/repos/{repo}/collaborators/{bot}/permission")
    except NotFound:
        return False
    return str(body.get("permission")) in ("write", "admin")


def bot_invited(gateway: Gateway, repo: str, bot: str) -> bool:
    """Whether an invitation of the bot waits (the repository's admins see them)."""
    try:
        invitations = list(gateway.paginate(f"/repos/{repo}/invitations"))
    except (NotFound, Forbidden):  # not an admin of it: the invitation is sent (again)
        return False
    return any(
        str((invitation.get("invitee") or {}).get("login", "")).lower() == bot.lower()
        for invitation in invitations
    )


def workflow_states(gateway: Gateway, repo: str) -> dict[str, str]:
    body = gateway.get(f"/repos/{repo}/actions/workflows", params={"per_page": 100})
    return {str(w["path"]): str(w["state"]) for w in body.get("workflows") or []}
