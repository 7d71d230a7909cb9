"""A local certificate-transparency log: the SCT Fulcio embeds in each certificate.

Fulcio's precertificate flow (RFC 6962 section 3.1): the authority signs a
precertificate (the certificate to be, with the critical poison extension), the
log answers a signed certificate timestamp over it, and the authority issues the
final certificate with that SCT embedded. The SCT signs the precertificate's TBS
without the poison, bound to the issuer's key hash, which is exactly what a
verifier rebuilds from the final certificate (its TBS without the SCT list).
Nothing is kept beyond the key: the stand-in needs no tree to hand out SCTs.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable
from datetime import UTC, datetime

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

POISON = x509.ObjectIdentifier("1.3.6.1.4.1.11129.2.4.3")
SCT_LIST = x509.ObjectIdentifier("1.3.6.1.4.1.11129.2.4.2")
PRECERT_ENTRY = 1


def key_id(key: ec.EllipticCurvePublicKey) -> bytes:
    """RFC 6962's log (and issuer) key id: SHA-256 of the DER SubjectPublicKeyInfo."""
    der = key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return hashlib.sha256(der).digest()


def tbs_without_poison(precert: x509.Certificate) -> bytes:
    """The precertificate's TBS with the poison extension taken out. Rebuilt with the
    same fields in the same order (DER is deterministic) and signed with a throwaway key
    of the same kind: the TBS names only the algorithm, not the key."""
    builder = (
        x509.CertificateBuilder()
        .subject_name(precert.subject)
        .issuer_name(precert.issuer)
        .public_key(precert.public_key())
        .serial_number(precert.serial_number)
        .not_valid_before(precert.not_valid_before_utc)
        .not_valid_after(precert.not_valid_after_utc)
    )
    for ext in precert.extensions:
        if ext.oid != POISON:
            builder = builder.add_extension(ext.value, ext.critical)
    algorithm = precert.signature_hash_algorithm
    assert isinstance(algorithm, hashes.SHA384 | hashes.SHA256)
    throwaway = ec.generate_private_key(ec.SECP256R1())
    return builder.sign(throwaway, algorithm).tbs_certificate_bytes


def sct_extension(sct: bytes) -> x509.UnrecognizedExtension:
    """The X.509 extension holding one SCT (an OCTET STRING around a TLS SCT list)."""
    inner = struct.pack("!H", len(sct)) + sct
    tls = struct.pack("!H", len(inner)) + inner
    return x509.UnrecognizedExtension(SCT_LIST, _octet_string(tls))


def _octet_string(data: bytes) -> bytes:
    if len(data) < 0x80:
        return bytes([0x04, len(data)]) + data
    size = len(data).to_bytes((len(data).bit_length() + 7) // 8, "big")
    return bytes([0x04, 0x80 | len(size)]) + size + data


class LocalCTLog:
    """Signs SCTs for precertificates with a P-256 key (the trust root's ``ctlogs`` key)."""

    def __init__(self, clock: Callable[[], datetime] | None = None) -> None:
        self._key = ec.generate_private_key(ec.SECP256R1())
        self.clock = clock or (lambda: datetime.now(UTC))

    @property
    def public_key(self) -> ec.EllipticCurvePublicKey:
        return self._key.public_key()

    def add_pre_chain(self, precert: x509.Certificate, issuer: x509.Certificate) -> bytes:
        """The TLS-encoded SCT (v1) for ``precert``, once it is a precertificate ``issuer``
        signed (``add-pre-chain``); ``ValueError`` otherwise."""
        try:
            poison = precert.extensions.get_extension_for_oid(POISON)
        except x509.ExtensionNotFound:
            raise ValueError("not a precertificate (no poison extension)") from None
        if not poison.critical:
            raise ValueError("the precertificate's poison extension is not critical")
        try:
            precert.verify_directly_issued_by(issuer)
        except (ValueError, TypeError, InvalidSignature):
            raise ValueError("the precertificate is not signed by the issuer given") from None
        public = issuer.public_key()
        if not isinstance(public, ec.EllipticCurvePublicKey):
            raise ValueError("only ECDSA issuers are logged")
        return self._sct(tbs_without_poison(precert), public)

    def _sct(self, tbs: bytes, issuer: ec.EllipticCurvePublicKey) -> bytes:
        millis = int(self.clock().timestamp() * 1000)
        entry = key_id(issuer) + len(tbs).to_bytes(3, "big") + tbs
        signed = struct.pack("!BBQH", 0, 0, millis, PRECERT_ENTRY) + entry + struct.pack("!H", 0)
        signature = self._key.sign(signed, ec.ECDSA(hashes.SHA256()))
        return (
            bytes([0])
            + key_id(self.public_key)
            + struct.pack("!QH", millis, 0)
            + bytes([4, 3])  # sha256, ecdsa
            + struct.pack("!H", len(signature))
            + signature
        )
