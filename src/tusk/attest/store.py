"""The control repository's attestations, through GitHub's documented API.

``POST /repos/{owner}/{repo}/attestations`` stores a bundle;
``GET /repos/{owner}/{repo}/attestations/sha256:{hex}`` lists the bundles whose
statement names that subject digest. A store whose answer was lost may have
landed, so it is looked for (by the chain head it names, and the signature only
this bundle carries) before it is sent again. The only I/O of ``tusk.attest``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tusk.github.gateway import Gateway, NotFound
from tusk.github.once import DEFAULT_PATIENCE, Patience, create_once


@dataclass(frozen=True)
class Stored:
    ident: int | None  # None: found after a lost answer (a listing names no id)


def store(
    gateway: Gateway,
    repository: str,
    bundle: dict[str, Any],
    head: str,
    *,
    patience: Patience = DEFAULT_PATIENCE,
    sleep: Callable[[float], None] = time.sleep,
) -> Stored:
    """Store ``bundle`` (which names the chain ``head``) in ``repository``'s attestations."""

    def send() -> Stored:
        answer = gateway.post(
            f"/repos/{repository}/attestations", json={"bundle": bundle}, may_repeat=False
        )
        return Stored(int(answer.body["id"]))

    def find() -> Stored | None:
        mine = signature_of(bundle)
        found = any(signature_of(b) == mine for b in bundles_for(gateway, repository, head))
        return Stored(None) if found else None

    return create_once(send, find, sleep=sleep, patience=patience, what="the attestation")


def signature_of(bundle: Any) -> str | None:
    """The envelope's first signature: an ephemeral key's, so no other bundle has it."""
    try:
        return str(bundle["dsseEnvelope"]["signatures"][0]["sig"])
    except (KeyError, IndexError, TypeError):
        return None


def bundles_for(gateway: Gateway, repository: str, digest: str) -> list[dict[str, Any]]:
    """Every stored bundle naming the sha256 ``digest`` (hex) as a subject, newest first."""
    try:
        answer = gateway.get(f"/repos/{repository}/attestations/sha256:{digest}")
    except NotFound:
        return []
    return [a["bundle"] for a in answer.get("attestations") or [] if isinstance(a, dict)]
