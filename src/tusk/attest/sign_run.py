"""Sign a run's audit record and store it: what the write-up calls once per run.

The statement's subjects come from the audit parts the write-up is about to post
(their markers name the chain head and the transcript's digest), so what is
signed is exactly what ``tusk audit verify`` recomputes from the log issue.
The OIDC token is held as a ``SecretStr``, used once and never written down.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, SecretStr

from tusk.attest import bundle, statement, store
from tusk.attest.rekor import TransparencyLog
from tusk.github.gateway import Gateway
from tusk.text.markers import parse_markers


@dataclass(frozen=True)
class Signer:
    """A job's OIDC token (audience ``sigstore``), the authority that certifies it and,
    when one is configured, the transparency log (Rekor) that logs the signature."""

    token: SecretStr
    subject: str  # the token's ``sub`` claim
    authority: bundle.CertificateAuthority
    log: TransparencyLog | None = None


class Attested(BaseModel):
    """What the write-up keeps of a run's attestation (in ``writeup.json``)."""

    model_config = ConfigDict(extra="forbid")

    mode: str  # github (the attestations API), off, or failed (signing was tried)
    ident: int | None = None
    head: str = ""
    reason: str = ""  # why signing failed


def audit_digests(audit_bodies: Sequence[str]) -> tuple[str, str | None] | None:
    """``(chain head, transcript digest)`` the audit parts announce, or None without parts."""
    for body in audit_bodies:
        for marker in parse_markers(body, "audit"):
            transcript = marker.get("transcript")
            return str(marker["head"]), str(transcript) if transcript else None
    return None


def attest(
    gateway: Gateway, repository: str, claims: statement.RunClaims, signer: Signer
) -> Attested:
    """Sign ``claims`` keylessly and store the bundle in ``repository``'s attestations."""
    signed = bundle.sign(
        statement.payload(claims),
        token=signer.token.get_secret_value(),
        subject=signer.subject,
        authority=signer.authority,
        log=signer.log,
    )
    return Attested(mode="github", ident=store.store(gateway, repository, signed), head=claims.head)
