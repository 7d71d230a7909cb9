"""The control repository's attestations, through GitHub's documented API.

``POST /repos/{owner}/{repo}/attestations`` stores a bundle;
``GET /repos/{owner}/{repo}/attestations/sha256:{hex}`` lists the bundles whose
statement names that subject digest. The only I/O of ``tusk.attest``.
"""

from __future__ import annotations

from typing import Any

from tusk.github.gateway import Gateway, NotFound


def store(gateway: Gateway, repository: str, bundle: dict[str, Any]) -> int:
    """Store ``bundle`` in ``repository``'s attestations; its id."""
    answer = gateway.post(f"/repos/{repository}/attestations", json={"bundle": bundle})
    return int(answer.body["id"])


def bundles_for(gateway: Gateway, repository: str, digest: str) -> list[dict[str, Any]]:
    """Every stored bundle naming the sha256 ``digest`` (hex) as a subject, newest first."""
    try:
        answer = gateway.get(f"/repos/{repository}/attestations/sha256:{digest}")
    except NotFound:
        return []
    return [a["bundle"] for a in answer.get("attestations") or [] if isinstance(a, dict)]
