"""A run's attestation as a Sigstore bundle (v0.3, JSON): a DSSE envelope over the
statement and the signing certificate. Sign with an ephemeral key, verify with
``cryptography``.

Signing: a fresh P-256 key, a certificate for it from the certificate authority
(Fulcio, or the local stand-in) that binds the job's OIDC identity, the DSSE
signature over the statement, and the key forgotten; then the log entry or the
signed timestamp that proves when. Verifying against a PEM root: the
certificate chains to it, is for code signing, the envelope's signature holds
under its key, and the identity is the expected workflow.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID

from tusk.attest.identity import Expected, WorkflowIdentity, identity_of, mismatch
from tusk.attest.rekor import TransparencyLog
from tusk.attest.statement import PAYLOAD_TYPE, pae
from tusk.attest.timestamp import TimestampAuthority

MEDIA_TYPE = "application/vnd.dev.sigstore.bundle.v0.3+json"

# (OIDC token, public key PEM, proof of possession) -> the leaf certificate, DER
CertificateAuthority = Callable[[str, bytes, bytes], bytes]


class AttestationError(Exception):
    """An attestation that does not hold, with the reason in plain words."""


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def sign(
    body: bytes,
    *,
    token: str,
    subject: str,
    authority: CertificateAuthority,
    log: TransparencyLog | None = None,
    stamp: TimestampAuthority | None = None,
) -> dict[str, Any]:
    """The bundle of ``body`` (an in-toto statement) signed keylessly. ``subject`` is the
    token's ``sub`` claim: the proof of possession Fulcio asks for is a signature over it.
    With a ``log`` (Rekor), the envelope is logged and the entry goes into the bundle;
    with a ``stamp`` (a timestamp authority), the signature is timestamped."""
    key = ec.generate_private_key(ec.SECP256R1())
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    proof = key.sign(subject.encode(), ec.ECDSA(hashes.SHA256()))
    leaf = authority(token, public, proof)
    signature = key.sign(pae(PAYLOAD_TYPE, body), ec.ECDSA(hashes.SHA256()))
    del key  # ephemeral: nothing keeps it
    envelope = {
        "payload": _b64(body),
        "payloadType": PAYLOAD_TYPE,
        "signatures": [{"sig": _b64(signature)}],
    }
    pem = x509.load_der_x509_certificate(leaf).public_bytes(serialization.Encoding.PEM)
    material: dict[str, Any] = {
        "certificate": {"rawBytes": _b64(leaf)},
        "tlogEntries": [] if log is None else [log(envelope, pem)],
    }
    if stamp is not None:
        stamped = {"signedTimestamp": _b64(stamp(signature))}
        material["timestampVerificationData"] = {"rfc3161Timestamps": [stamped]}
    return {"mediaType": MEDIA_TYPE, "verificationMaterial": material, "dsseEnvelope": envelope}


@dataclass(frozen=True)
class Verified:
    statement: dict[str, Any]
    identity: WorkflowIdentity
    established: str  # what proved when it was signed, or that nothing was checked
    checked_by: str  # which verifier accepted it


@dataclass(frozen=True)
class Parts:
    """A bundle's pieces, read but not yet trusted."""

    leaf: x509.Certificate
    body: bytes
    signatures: list[bytes]
    material: dict[str, Any]


def read(bundle: Any) -> Parts:
    """The pieces of a Sigstore bundle holding an in-toto statement; else ``AttestationError``."""
    try:
        material = bundle["verificationMaterial"]
        leaf = x509.load_der_x509_certificate(base64.b64decode(material["certificate"]["rawBytes"]))
        envelope = bundle["dsseEnvelope"]
        body = base64.b64decode(envelope["payload"])
        kind = str(envelope["payloadType"])
        signatures = [base64.b64decode(s["sig"]) for s in envelope["signatures"]]
    except (KeyError, TypeError, ValueError) as error:
        raise AttestationError(f"not a Sigstore bundle Tusk reads ({error})") from None
    if kind != PAYLOAD_TYPE:
        raise AttestationError(f"the envelope holds {kind}, not an in-toto statement")
    return Parts(leaf, body, signatures, dict(material))


def signed_by(parts: Parts, expected: Expected) -> tuple[dict[str, Any], WorkflowIdentity]:
    """The statement and the signer, once the certificate is for code signing, the
    signature holds under its key and the signer is the one expected (the chain to a
    root is the caller's to check)."""
    try:
        usage = parts.leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    except x509.ExtensionNotFound:
        usage = None
    if usage is None or ExtendedKeyUsageOID.CODE_SIGNING not in usage:
        raise AttestationError("the certificate is not for code signing")
    public = parts.leaf.public_key()
    if not isinstance(public, ec.EllipticCurvePublicKey):
        raise AttestationError("the certificate's key is not an ECDSA key")
    message = pae(PAYLOAD_TYPE, parts.body)
    if not any(_holds(public, sig, message) for sig in parts.signatures):
        raise AttestationError("the signature does not hold (the statement was changed?)")
    try:
        identity = identity_of(parts.leaf)
    except ValueError as error:
        raise AttestationError(str(error)) from None
    wrong = mismatch(identity, expected)
    if wrong is not None:
        raise AttestationError(f"wrong signer: {wrong}")
    try:
        statement = json.loads(parts.body)
    except ValueError:
        raise AttestationError("the signed statement is not JSON") from None
    return statement, identity


PEM_VERIFIER = "Tusk's verifier (PEM root)"


def verify(bundle: Any, *, roots: Sequence[x509.Certificate], expected: Expected) -> Verified:
    """The statement ``bundle`` signs, once everything holds; else ``AttestationError``.
    A PEM root names no log or timestamp authority, so neither is checked here."""
    parts = read(bundle)
    if not any(_issued_by(parts.leaf, root) for root in roots):
        raise AttestationError("the signing certificate does not chain to a trusted root")
    statement, identity = signed_by(parts, expected)
    came = "one came with it" if parts.material.get("tlogEntries") else "none came with it"
    return Verified(
        statement, identity, f"no transparency-log entry checked ({came})", PEM_VERIFIER
    )


def _issued_by(leaf: x509.Certificate, root: x509.Certificate) -> bool:
    try:
        leaf.verify_directly_issued_by(root)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def _holds(public: ec.EllipticCurvePublicKey, signature: bytes, message: bytes) -> bool:
    try:
        public.verify(signature, message, ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return False
    return True


def load_roots(pem: bytes) -> list[x509.Certificate]:
    return x509.load_pem_x509_certificates(pem)
