"""The bundle's transparency-log entry: the DSSE envelope uploaded to Rekor (v1 API).

``log_entry`` proposes a ``dsse`` 0.0.1 entry (the envelope and the signing
certificate, as ``cosign`` and ``sigstore-python`` do), and turns Rekor's answer
into the bundle's ``tlogEntries`` item: log index and id, integrated time, the
inclusion promise (signed entry timestamp), the inclusion proof with its signed
checkpoint, and the canonical body. Rekor is reached at ``TUSK_REKOR_URL`` (the
stand-in) or Sigstore's public-good Rekor; not through the gateway, as it is
not GitHub's API. Any request that creates something may have landed even when
its answer was lost, so an entry is asked for once and never again blindly.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import requests

REKOR_URL = "TUSK_REKOR_URL"
PUBLIC_GOOD_REKOR = "https://rekor.sigstore.dev"  # actions/attest: public repositories
TIMEOUT = 30

# (envelope, signing certificate DER) -> the bundle's tlogEntries item
TransparencyLog = Callable[[dict[str, Any], bytes], dict[str, Any]]


def proposed_entry(envelope: dict[str, Any], certificate_pem: bytes) -> dict[str, Any]:
    return {
        "apiVersion": "0.0.1",
        "kind": "dsse",
        "spec": {
            "proposedContent": {
                "envelope": json.dumps(envelope, separators=(",", ":")),
                "verifiers": [base64.b64encode(certificate_pem).decode()],
            }
        },
    }


def _b64_hex(value: str) -> str:
    return base64.b64encode(bytes.fromhex(value)).decode()


def bundle_entry(answer: Any) -> dict[str, Any]:
    """Rekor's answer (``{uuid: entry}``) as a bundle's ``tlogEntries`` item."""
    try:
        ((_, entry),) = dict(answer).items()
        proof = entry["verification"]["inclusionProof"]
        kind = json.loads(base64.b64decode(entry["body"]))
        return {
            "logIndex": str(entry["logIndex"]),
            "logId": {"keyId": _b64_hex(entry["logID"])},
            "kindVersion": {"kind": kind["kind"], "version": kind["apiVersion"]},
            "integratedTime": str(entry["integratedTime"]),
            "inclusionPromise": {
                "signedEntryTimestamp": entry["verification"]["signedEntryTimestamp"]
            },
            "inclusionProof": {
                "logIndex": str(proof["logIndex"]),
                "rootHash": _b64_hex(proof["rootHash"]),
                "treeSize": str(proof["treeSize"]),
                "hashes": [_b64_hex(h) for h in proof["hashes"]],
                "checkpoint": {"envelope": proof["checkpoint"]},
            },
            "canonicalizedBody": entry["body"],
        }
    except (KeyError, TypeError, ValueError) as error:
        raise RuntimeError(f"Rekor's answer is not a log entry ({type(error).__name__})") from None


def rekor(base: str) -> TransparencyLog:
    """A ``TransparencyLog`` at the Rekor ``base`` (``POST /api/v1/log/entries``)."""

    def log(envelope: dict[str, Any], certificate_pem: bytes) -> dict[str, Any]:
        session = requests.Session()
        session.trust_env = False  # as the gateway's: no proxy variables or .netrc
        answer = session.post(
            f"{base.rstrip('/')}/api/v1/log/entries",
            json=proposed_entry(envelope, certificate_pem),
            timeout=TIMEOUT,
        )
        if answer.status_code != 201:
            raise RuntimeError(f"Rekor refused the entry ({answer.status_code})")
        return bundle_entry(answer.json())

    return log
