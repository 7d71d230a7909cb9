"""The stand-ins' trust root in Sigstore's ``trusted_root.json`` format.

What sigstore-python's ``Verifier(trusted_root=...)`` is given for the local
Fulcio (its root certificate), the local Rekor (``tlogs``), the local CT log
(``ctlogs``) and the local timestamp authority (``timestampAuthorities``), the way
the public-good instance's and GitHub's roots name their services. Pure.
"""

from __future__ import annotations

import base64
from datetime import datetime, timedelta
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tusk.sandbox.ctlog import LocalCTLog, key_id
from tusk.sandbox.fulcio import LocalFulcio
from tusk.sandbox.rekor import LocalRekor
from tusk.sandbox.tsa import LocalTimestampAuthority

MEDIA_TYPE = "application/vnd.dev.sigstore.trustedroot+json;version=0.1"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _log(url: str, key: ec.EllipticCurvePublicKey, since: datetime) -> dict[str, Any]:
    der = key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return {
        "baseUrl": url,
        "hashAlgorithm": "SHA2_256",
        "publicKey": {
            "rawBytes": _b64(der),
            "keyDetails": "PKIX_ECDSA_P256_SHA_256",
            "validFor": {"start": _when(since)},
        },
        "logId": {"keyId": _b64(key_id(key))},
    }


def _authority(
    common_name: str, url: str, chain: list[x509.Certificate], since: datetime
) -> dict[str, Any]:
    return {
        "subject": {"organization": "tusk", "commonName": common_name},
        "uri": url,
        "certChain": {
            "certificates": [
                {"rawBytes": _b64(cert.public_bytes(serialization.Encoding.DER))} for cert in chain
            ]
        },
        "validFor": {"start": _when(since)},
    }


def trusted_root(
    *,
    fulcio: LocalFulcio,
    rekor: LocalRekor | None,
    url: str,
    tsa: LocalTimestampAuthority | None = None,
    ct_log: LocalCTLog | None = None,
) -> dict[str, Any]:
    """The trust root naming the stand-ins served at ``url``: GitHub's own instance
    (a Fulcio and a timestamp authority, no logs) is the one without ``rekor``.
    The CT log is the Fulcio's unless another is named."""
    since = fulcio.root.not_valid_before_utc - timedelta(minutes=1)
    ct_log = ct_log or fulcio.ct_log
    return {
        "mediaType": MEDIA_TYPE,
        "tlogs": [] if rekor is None else [_log(url, rekor.public_key, since)],
        "certificateAuthorities": [_authority("tusk local fulcio", url, [fulcio.root], since)],
        "ctlogs": [] if ct_log is None else [_log(url, ct_log.public_key, since)],
        "timestampAuthorities": []
        if tsa is None
        else [_authority("tusk local timestamp authority", url, tsa.chain, since)],
    }
