"""A local RFC 3161 time-stamping authority: what GitHub's own TSA is to a private
control repository's attestations.

GitHub's artifact attestations for a private repository keep no transparency log:
the signing time is proven by a timestamp token from GitHub's TSA over the DSSE
signature. ``LocalTimestampAuthority`` answers a ``TimeStampReq`` (DER) with a
``TimeStampResp`` whose token is a CMS ``SignedData`` over a ``TSTInfo``, signed by
a certificate for ``id-kp-timeStamping`` (critical, as RFC 3161 §2.3 asks) under
its own root, with the ESS signing-certificate-v2 attribute RFC 5816 names.
The ASN.1 is built with ``asn1crypto``; the keys and certificates with
``cryptography``. Clocks are injected; nothing here reaches the internet.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import ClassVar

from asn1crypto import algos, cms, core, tsp
from asn1crypto import x509 as asn1_x509
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

Clock = Callable[[], datetime]
POLICY = "1.3.6.1.4.1.57264.2"  # the policy Sigstore's timestamp authority names
DIGESTS = {"sha256": hashlib.sha256, "sha384": hashlib.sha384, "sha512": hashlib.sha512}


def _name(common: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "tusk"),
            x509.NameAttribute(NameOID.COMMON_NAME, common),
        ]
    )


class LocalTimestampAuthority:
    """Plays timestamp.githubapp.com: stamps a digest with the time it saw it."""

    def __init__(self, clock: Clock | None = None) -> None:
        self.clock = clock or (lambda: datetime.now(UTC))
        now = self.clock()
        root_key = ec.generate_private_key(ec.SECP384R1())
        self._key = ec.generate_private_key(ec.SECP256R1())
        self.root = (
            x509.CertificateBuilder()
            .subject_name(_name("tusk local timestamp root"))
            .issuer_name(_name("tusk local timestamp root"))
            .public_key(root_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(days=1))
            .not_valid_after(now + timedelta(days=365))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .sign(root_key, hashes.SHA384())
        )
        self.leaf = (
            x509.CertificateBuilder()
            .subject_name(_name("tusk local timestamp authority"))
            .issuer_name(self.root.subject)
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(days=1))
            .not_valid_after(now + timedelta(days=365))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.TIME_STAMPING]), critical=True
            )
            .sign(root_key, hashes.SHA384())
        )

    @property
    def chain(self) -> list[x509.Certificate]:
        """The signing certificate first, then the root (a trust root's ``certChain``)."""
        return [self.leaf, self.root]

    def respond(self, request_der: bytes) -> bytes:
        """The ``TimeStampResp`` (DER) to a ``TimeStampReq``; a rejection when the
        request is not one this authority can stamp."""
        try:
            request = tsp.TimeStampReq.load(request_der)
            imprint = request["message_imprint"]
            algorithm = imprint["hash_algorithm"]["algorithm"].native
            digest = imprint["hashed_message"].native
            nonce = request["nonce"].native
            wants_cert = bool(request["cert_req"].native)
        except (ValueError, TypeError, KeyError):
            return _rejection("bad_data_format", "not a TimeStampReq")
        if algorithm not in DIGESTS:
            return _rejection("bad_alg", f"{algorithm} is not a digest this authority stamps")
        if len(digest) != DIGESTS[algorithm]().digest_size:
            return _rejection("bad_data_format", "the digest's length is not its algorithm's")
        info = tsp.TSTInfo(
            {
                "version": "v1",
                "policy": POLICY,
                "message_imprint": {
                    "hash_algorithm": {"algorithm": algorithm},
                    "hashed_message": digest,
                },
                "serial_number": secrets.randbits(63),
                "gen_time": self.clock(),
                "accuracy": {"seconds": 1},
                **({"nonce": nonce} if nonce is not None else {}),
            }
        )
        token = self._token(info, wants_cert)
        return bytes(
            tsp.TimeStampResp({"status": {"status": "granted"}, "time_stamp_token": token}).dump()
        )

    def _token(self, info: tsp.TSTInfo, with_certificate: bool) -> cms.ContentInfo:
        leaf_der = self.leaf.public_bytes(serialization.Encoding.DER)
        leaf = asn1_x509.Certificate.load(leaf_der)
        attributes = cms.CMSAttributes(
            [
                {"type": "content_type", "values": ["tst_info"]},
                {"type": "message_digest", "values": [hashlib.sha256(info.dump()).digest()]},
                {
                    "type": "signing_certificate_v2",
                    "values": [{"certs": [{"cert_hash": hashlib.sha256(leaf_der).digest()}]}],
                },
            ]
        )
        # The signature covers the attributes as a SET (RFC 5652 §5.4), not as [0].
        signature = self._key.sign(attributes.dump(), ec.ECDSA(hashes.SHA256()))
        signer = cms.SignerInfo(
            {
                "version": "v1",
                "sid": {
                    "issuer_and_serial_number": {
                        "issuer": leaf.issuer,
                        "serial_number": leaf.serial_number,
                    }
                },
                "digest_algorithm": algos.DigestAlgorithm({"algorithm": "sha256"}),
                "signed_attrs": attributes,
                "signature_algorithm": algos.SignedDigestAlgorithm({"algorithm": "sha256_ecdsa"}),
                "signature": signature,
            }
        )
        signed = cms.SignedData(
            {
                "version": "v3",
                "digest_algorithms": [{"algorithm": "sha256"}],
                "encap_content_info": {"content_type": "tst_info", "content": info},
                **({"certificates": [leaf]} if with_certificate else {}),
                "signer_infos": [signer],
            }
        )
        return cms.ContentInfo({"content_type": "signed_data", "content": signed})


class _Refusal(core.Sequence):  # type: ignore[misc]
    """A ``TimeStampResp`` without its token, which asn1crypto's own type requires."""

    _fields: ClassVar = [("status", tsp.PKIStatusInfo)]


def _rejection(failure: str, text: str) -> bytes:
    status = {"status": "rejection", "status_string": [text], "fail_info": {failure}}
    return bytes(_Refusal({"status": status}).dump())
