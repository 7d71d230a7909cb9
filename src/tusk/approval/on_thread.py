"""The preview posted on the trigger's thread, once (I/O through the gateway).

The preview carries its digest in its ``tusk:preview`` marker, which is also its
nonce: after a lost answer, or when the write-up runs again, the bot's comment
with that digest is looked for before anything is posted (``tusk.github.once``).
"""

from __future__ import annotations

from typing import Any

from tusk.github.gateway import Gateway
from tusk.github.once import DEFAULT_PATIENCE, Patience, find_comment, post_marked_comment


def find_preview(
    gateway: Gateway, repo: str, number: int, *, digest: str, bot: str
) -> dict[str, Any] | None:
    """The bot's preview of ``digest`` on ``repo#number``, or None."""
    return find_comment(gateway, repo, number, kind="preview", nonce=digest, key="digest", bot=bot)


def post_preview(
    gateway: Gateway,
    *,
    repo: str,
    number: int,
    body: str,
    digest: str,
    bot: str,
    patience: Patience = DEFAULT_PATIENCE,
) -> dict[str, Any]:
    """Post the preview unless it is there already; returns the comment."""
    return post_marked_comment(
        gateway,
        repo,
        number,
        body,
        kind="preview",
        nonce=digest,
        key="digest",
        bot=bot,
        look_first=True,
        patience=patience,
        what=f"the preview on {repo}#{number}",
    )
