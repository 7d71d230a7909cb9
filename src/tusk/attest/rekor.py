"""The bundle's transparency-log entry: the DSSE envelope uploaded to Rekor (v1 API).

``log_entry`` proposes a ``dsse`` 0.0.1 entry (the envelope and the signing
certificate, as ``cosign`` and ``sigstore-python`` do), and turns Rekor's answer
into the bundle's ``tlogEntries`` item: log index and id, integrated time, the
inclusion promise (signed entry timestamp), the inclusion proof with its signed
checkpoint, and the canonical body. Rekor is reached at ``TUSK_REKOR_URL`` (the
stand-in) or Sigstore's public-good Rekor; not through the gateway, as it is
not GitHub's API. An entry whose answer was lost may be logged; sending the same
entry again is how to find out, since Rekor logs an entry once and answers a
repeat with 409 and the entry's location, which is then read.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any
from urllib.parse import urljoin

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


def rekor(base: str, *, sends: int = 2) -> TransparencyLog:
    """A ``TransparencyLog`` at the Rekor ``base`` (``POST /api/v1/log/entries``)."""

    def log(envelope: dict[str, Any], certificate_pem: bytes) -> dict[str, Any]:
        session = requests.Session()
        session.trust_env = False  # as the gateway's: no proxy variables or .netrc
        url = f"{base.rstrip('/')}/api/v1/log/entries"
        proposed = proposed_entry(envelope, certificate_pem)
        for attempt in range(1, sends + 1):
            try:
                answer = session.post(url, json=proposed, timeout=TIMEOUT)
            except requests.RequestException:
                if attempt == sends:
                    raise
                continue  # the entry may be logged: sending it again finds it (409)
            if answer.status_code == 201:
                return bundle_entry(answer.json())
            if answer.status_code == 409 and answer.headers.get("Location"):
                return bundle_entry(_logged(session, base, answer.headers["Location"]))
            if answer.status_code < 500 or attempt == sends:
                raise RuntimeError(f"Rekor refused the entry ({answer.status_code})")
        raise AssertionError("unreachable")  # the loop returns or raises

    return log


def _logged(session: requests.Session, base: str, location: str) -> Any:
    """The entry Rekor says is logged already (its answer to a repeat is where it is)."""
    found = session.get(urljoin(base.rstrip("/") + "/", location), timeout=TIMEOUT)
    if found.status_code != 200:
        raise RuntimeError(f"Rekor named a logged entry it then did not show ({found.status_code})")
    return found.json()
