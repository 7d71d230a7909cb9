"""The bot's fork of a repository, found by its parent whatever its name.

When the bot already owns a repository with the upstream's name, GitHub
creates the fork as ``name-1`` (``name-2``, ...) and answers 202 with that
``full_name`` (octokit/octokit.js#483, cli/cli#5030); a fork can also be
renamed. So ``bot/<name>`` is only the first guess: the bot's forks are
listed with their parents (GraphQL, 100 a request) and matched on the parent.
GitHub keeps at most one fork of a repository per owner (forking again
returns the existing fork), so the parent identifies it.

Callers hold a gateway with one of the bot's own tokens: ``viewer`` is the
bot, and its private forks are visible.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from tusk.errors import UserError
from tusk.github.gateway import Gateway, NotFound

FORKS_QUERY = """
query($after: String) {
  viewer {
    login
    repositories(first: 100, after: $after, isFork: true, ownerAffiliations: [OWNER]) {
      pageInfo { hasNextPage endCursor }
      nodes { nameWithOwner parent { nameWithOwner } }
    }
  }
}
"""


def bot_forks(gateway: Gateway, bot: str) -> Iterator[tuple[str, str]]:
    """(fork full name, parent full name) of every fork ``bot`` owns."""
    after: str | None = None
    while True:
        viewer = gateway.graphql(FORKS_QUERY, {"after": after}).get("viewer") or {}
        if str(viewer.get("login") or "").lower() != bot.lower():
            raise UserError(
                f"the {gateway.token_name} token belongs to {viewer.get('login')!r}, "
                f"not to the bot {bot!r}",
                "Give Tusk the bot account's own tokens (TUSK_AGENT_TOKEN, TUSK_READ_TOKEN, "
                "TUSK_BOT_TOKEN) and set `bot` in tusk.yml to its login.",
            )
        page = viewer.get("repositories") or {}
        for node in page.get("nodes") or []:
            parent = (node or {}).get("parent") or {}
            if node and parent.get("nameWithOwner"):
                yield str(node["nameWithOwner"]), str(parent["nameWithOwner"])
        info = page.get("pageInfo") or {}
        if not info.get("hasNextPage"):
            return
        after = info["endCursor"]


def forks_by_parent(gateway: Gateway, bot: str) -> dict[str, str]:
    """``parent full name (lower) -> fork full name`` for all the bot's forks."""
    return {parent.lower(): fork for fork, parent in bot_forks(gateway, bot)}


def is_fork_of(repo: Mapping[str, Any] | None, upstream: str) -> bool:
    """Whether a REST repository object is a fork whose parent is ``upstream``."""
    if not repo or not repo.get("fork"):
        return False
    parent = (repo.get("parent") or {}).get("full_name") or ""
    return str(parent).lower() == upstream.lower()


def find_fork(gateway: Gateway, bot: str, upstream: str) -> dict[str, Any] | None:
    """The bot's fork of ``upstream`` as GitHub's REST repository object, or None.

    One request when the fork bears the upstream's name (the usual case);
    otherwise the bot's forks are listed and the one whose parent is
    ``upstream`` is read.
    """
    name = upstream.split("/", 1)[1]
    try:
        guess = gateway.get(f"/repos/{bot}/{name}")
    except NotFound:
        guess = None
    if is_fork_of(guess, upstream):
        return dict(guess)
    fork = forks_by_parent(gateway, bot).get(upstream.lower())
    if fork is None:
        return None
    try:
        found = gateway.get(f"/repos/{fork}")
    except NotFound:
        return None  # deleted since it was listed
    return dict(found) if is_fork_of(found, upstream) else None
