"""Sign a run's audit record and store it: what the write-up calls once per run.

The statement's subjects come from the audit parts the write-up is about to post
(their markers name the chain head and the transcript's digest), so what is
signed is exactly what ``tusk audit verify`` recomputes from the log issue.
The OIDC token is held as a ``SecretStr``, used once and never written down.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, SecretStr

from tusk.attest import bundle, statement, store
from tusk.attest.rekor import TransparencyLog
from tusk.attest.timestamp import TimestampAuthority
from tusk.github.gateway import Gateway
from tusk.text.markers import parse_markers


@dataclass(frozen=True)
class Signer:
    """A job's OIDC token (audience ``sigstore``), the authority that certifies it and,
    as configured, the transparency log (Rekor) that logs the signature and the
    timestamp authority that stamps it."""

    token: SecretStr
    subject: str  # the token's ``sub`` claim
    authority: bundle.CertificateAuthority
    log: TransparencyLog | None = None
    stamp: TimestampAuthority | None = None  # proves the signing time when nothing logs it
    route: str = "github"  # the setting that chose the route: github (auto) or sigstore
    store_token: SecretStr | None = None  # the job's github.token; None: the caller's gateway


class Attested(BaseModel):
    """What the write-up keeps of a run's attestation (in ``writeup.json``)."""

    model_config = ConfigDict(extra="forbid")

    mode: str  # github or sigstore (the route signed through), off, or failed (tried)
    ident: int | None = None
    head: str = ""
    reason: str = ""  # why signing failed
    stored_by: str = ""  # which token stored the bundle: job or bot
    proof: str = ""  # what shows when it was signed: logged, timestamped, or nothing


def audit_digests(audit_bodies: Sequence[str]) -> tuple[str, str | None] | None:
    """``(chain head, transcript digest)`` the audit parts announce, or None without parts."""
    for body in audit_bodies:
        for marker in parse_markers(body, "audit"):
            transcript = marker.get("transcript")
            return str(marker["head"]), str(transcript) if transcript else None
    return None


def signed_bundle(body: bytes, signer: Signer) -> dict[str, Any]:
    """``body`` signed keylessly by ``signer``: logged or timestamped as it is set up."""
    return bundle.sign(
        body,
        token=signer.token.get_secret_value(),
        subject=signer.subject,
        authority=signer.authority,
        log=signer.log,
        stamp=signer.stamp,
    )


def attest(
    gateway: Gateway, repository: str, claims: statement.RunClaims, signer: Signer
) -> Attested:
    """Sign ``claims`` keylessly and store the bundle in ``repository``'s attestations:
    with the job's own token when the signer has it (what the caller's ``attestations:
    write`` grants), else with ``gateway`` (the bot's, as the stand-ins and older
    callers have it)."""
    signed = signed_bundle(statement.payload(claims), signer)
    storing, stored_by = gateway, "bot"
    if signer.store_token is not None:
        storing = Gateway(api_url=gateway.api_url, token=signer.store_token, token_name="job")
        stored_by = "job"
    ident = store.store(storing, repository, signed, claims.head).ident
    proof = "logged" if signer.log else "timestamped" if signer.stamp else ""
    return Attested(
        mode=signer.route, ident=ident, head=claims.head, stored_by=stored_by, proof=proof
    )
