"""A bundle without a log entry, verified by its signed timestamp against a ``trusted_root.json``.

GitHub's route for a private repository signs with GitHub's own Fulcio and has
the signature timestamped by GitHub's authority; there is no transparency log
and no SCT (GitHub's trust root names neither). sigstore-python's ``Bundle``
refuses a bundle without a log entry, so this is checked here, with the same
libraries it uses: the timestamp token with ``rfc3161-client`` against the trust
root's timestamp authorities (within each one's validity), the signing
certificate's chain with ``cryptography``'s verifier at the stamped time, then
the signature and the signer as for any bundle (``tusk.attest.bundle``). The
steps are those ``gh attestation verify`` takes for such a bundle.
"""

from __future__ import annotations

import base64
from datetime import datetime
from typing import Any

from cryptography.x509 import Certificate, ExtendedKeyUsage, UnsupportedGeneralNameType
from cryptography.x509.verification import (
    Criticality,
    ExtensionPolicy,
    PolicyBuilder,
    Store,
    VerificationError,
)
from rfc3161_client import TimeStampResponse, VerifierBuilder, decode_timestamp_response
from rfc3161_client.errors import VerificationError as TimestampError
from sigstore.models import TrustedRoot

from tusk.attest.bundle import AttestationError, Parts, Verified, read, signed_by
from tusk.attest.identity import Expected

NAME = "Tusk's verifier with rfc3161-client (trusted root)"
MOST_TIMESTAMPS = 32  # a bundle is hostile input: bound the work it asks for


def timestamps(parts: Parts) -> list[str]:
    """The bundle's signed timestamps, base64 (empty when it has none)."""
    data = parts.material.get("timestampVerificationData") or {}
    stamps = data.get("rfc3161Timestamps") if isinstance(data, dict) else None
    if not isinstance(stamps, list):
        return []
    return [str(s.get("signedTimestamp") or "") for s in stamps if isinstance(s, dict)]


def verify(bundle: Any, *, root: TrustedRoot, expected: Expected) -> Verified:
    """The statement ``bundle`` signs, once its timestamp, chain, signature and signer
    hold; else ``AttestationError``."""
    parts = read(bundle)
    stamps = timestamps(parts)
    if not stamps:
        raise AttestationError(
            "the bundle has neither a transparency-log entry nor a signed timestamp: "
            "nothing shows it was signed while its certificate was valid"
        )
    if len(stamps) > MOST_TIMESTAMPS:
        raise AttestationError(f"the bundle carries {len(stamps)} timestamps, more than any signer")
    signature = parts.signatures[0] if parts.signatures else b""
    times = [t for t in (_stamped(s, signature, root) for s in stamps) if t is not None]
    if not times:
        raise AttestationError(
            "no signed timestamp holds under the trusted root's timestamp authorities "
            "(another authority, or not over this signature)"
        )
    for moment in times:
        _chain_at(parts.leaf, moment, root)
    statement, identity = signed_by(parts, expected)
    when = min(times).strftime("%Y-%m-%dT%H:%M:%SZ")
    return Verified(statement, identity, f"its signed timestamp verified ({when})", NAME)


def _stamped(encoded: str, signature: bytes, root: TrustedRoot) -> datetime | None:
    """When the authority says it saw ``signature``, if one trusted authority's token holds."""
    try:
        response = decode_timestamp_response(base64.b64decode(encoded))
    except ValueError:
        return None
    for authority in root.get_timestamp_authorities():
        chain = authority.certificates(allow_expired=True)
        if len(chain) < 2 or not _holds(response, signature, chain):
            continue
        moment = response.tst_info.gen_time
        end = authority.validity_period_end
        if authority.validity_period_start <= moment and (end is None or moment < end):
            return moment
    return None


def _holds(response: TimeStampResponse, signature: bytes, chain: list[Certificate]) -> bool:
    builder = VerifierBuilder().tsa_certificate(chain[0]).add_root_certificate(chain[-1])
    for middle in chain[1:-1]:
        builder = builder.add_intermediate_certificate(middle)
    try:
        return builder.build().verify_message(response, signature)
    except TimestampError:
        return False


def _chain_at(leaf: Certificate, moment: datetime, root: TrustedRoot) -> None:
    """That ``leaf`` chains to the root's Fulcio and was valid at ``moment``. Fulcio's
    certificates are for code signing, not client auth: only the EKU rule is relaxed."""
    ca = ExtensionPolicy.webpki_defaults_ca().may_be_present(
        ExtendedKeyUsage, Criticality.NON_CRITICAL, None
    )
    ee = ExtensionPolicy.webpki_defaults_ee().may_be_present(
        ExtendedKeyUsage, Criticality.NON_CRITICAL, None
    )
    verifier = (
        PolicyBuilder()
        .store(Store(root.get_fulcio_certs()))
        .time(moment)
        .extension_policies(ca_policy=ca, ee_policy=ee)
        .build_client_verifier()
    )
    try:
        verifier.verify(leaf, [])
    except (VerificationError, UnsupportedGeneralNameType, ValueError) as error:
        raise AttestationError(
            f"the signing certificate does not chain to the trusted root at the stamped "
            f"time ({error})"
        ) from None
