"""The stand-ins' trust root in Sigstore's ``trusted_root.json`` format.

What sigstore-python's ``Verifier(trusted_root=...)`` is given for the local
Fulcio (its root certificate), the local Rekor (``tlogs``) and the local CT log
(``ctlogs``), the way the public-good instance's root names its services. Pure.
"""

from __future__ import annotations

import base64
from datetime import datetime, timedelta
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tusk.sandbox.ctlog import LocalCTLog, key_id
from tusk.sandbox.fulcio import LocalFulcio
from tusk.sandbox.rekor import LocalRekor

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


def trusted_root(
    *, fulcio: LocalFulcio, rekor: LocalRekor, ct_log: LocalCTLog, url: str
) -> dict[str, Any]:
    """The trust root naming the stand-ins served at ``url``."""
    since = fulcio.root.not_valid_before_utc - timedelta(minutes=1)
    root_der = fulcio.root.public_bytes(serialization.Encoding.DER)
    return {
        "mediaType": MEDIA_TYPE,
        "tlogs": [_log(url, rekor.public_key, since)],
        "certificateAuthorities": [
            {
                "subject": {"organization": "tusk", "commonName": "tusk local fulcio"},
                "uri": url,
                "certChain": {"certificates": [{"rawBytes": _b64(root_der)}]},
                "validFor": {"start": _when(since)},
            }
        ],
        "ctlogs": [_log(url, ct_log.public_key, since)],
        "timestampAuthorities": [],
    }
