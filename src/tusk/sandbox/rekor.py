"""A local Rekor (v1 API): a transparency log of DSSE entries, as Sigstore's.

``add`` takes what ``POST /api/v1/log/entries`` takes for a ``dsse`` 0.0.1
entry (the envelope and the certificate that verifies it), checks the
envelope's signature under that certificate, appends the entry's canonical body
to an RFC 6962 tree and answers as Rekor does: ``{uuid: {body, integratedTime,
logID, logIndex, verification: {inclusionProof, signedEntryTimestamp}}}``, with
the inclusion proof's checkpoint a signed note and the signed entry timestamp
(the inclusion promise) a signature over the canonical entry. One P-256 key
signs both; it is the ``tlogs`` key of the test trust root. An entry proposed
again is refused as Rekor refuses it (409, ``Duplicate``, naming its uuid), and
``entry`` answers ``GET /api/v1/log/entries/{uuid}``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

from tusk.attest.statement import pae
from tusk.sandbox import merkle
from tusk.sandbox.ctlog import key_id


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Duplicate(ValueError):
    """The entry is logged already: Rekor answers 409 with where it is."""

    def __init__(self, uuid: str) -> None:
        super().__init__(
            f"an equivalent entry already exists in the transparency log with UUID {uuid}"
        )
        self.uuid = uuid


class LocalRekor:
    """Rekor's log of entries for one test or demo; the clock gives integrated times."""

    origin = "tusk local rekor"

    def __init__(self, clock: Callable[[], datetime] | None = None) -> None:
        self._key = ec.generate_private_key(ec.SECP256R1())
        self.clock = clock or (lambda: datetime.now(UTC))
        self._leaves: list[bytes] = []
        self._logged: dict[str, tuple[int, int, bytes]] = {}  # uuid: index, time, body
        self._lock = threading.Lock()

    @property
    def public_key(self) -> ec.EllipticCurvePublicKey:
        return self._key.public_key()

    @property
    def log_id(self) -> bytes:
        return key_id(self.public_key)

    def add(self, proposed: Any) -> dict[str, Any]:
        """The logged entry for a proposed ``dsse`` 0.0.1 entry; ``ValueError`` when it
        is not one or its signature does not hold, ``Duplicate`` when it is logged."""
        body = _canonical(_dsse_body(proposed))
        uuid = merkle.leaf_hash(body).hex()
        with self._lock:
            if uuid in self._logged:
                raise Duplicate(uuid)
            self._leaves.append(merkle.leaf_hash(body))
            self._logged[uuid] = (len(self._leaves) - 1, int(self.clock().timestamp()), body)
        return self.entry(uuid)

    def entry(self, uuid: str) -> dict[str, Any]:
        """A logged entry as ``GET /api/v1/log/entries/{uuid}`` answers it: proven in
        the tree as it is now. ``KeyError`` when nothing by that uuid is logged."""
        with self._lock:
            index, integrated, body = self._logged[uuid]
            leaves = list(self._leaves)
        root = merkle.root(leaves)
        encoded = base64.b64encode(body).decode()
        promise = {
            "body": encoded,
            "integratedTime": integrated,
            "logID": self.log_id.hex(),
            "logIndex": index,
        }
        proof = {
            "logIndex": index,
            "treeSize": len(leaves),
            "rootHash": root.hex(),
            "hashes": [h.hex() for h in merkle.inclusion_proof(index, leaves)],
            "checkpoint": self.checkpoint(len(leaves), root),
        }
        promised = base64.b64encode(self._sign(_canonical(promise))).decode()
        return {
            uuid: {
                **promise,
                "verification": {
                    "inclusionProof": proof,
                    "signedEntryTimestamp": promised,
                },
            }
        }

    def checkpoint(self, size: int, root: bytes) -> str:
        """The signed note of the tree head (the checkpoint format Rekor serves)."""
        note = f"{self.origin}\n{size}\n{base64.b64encode(root).decode()}\n"
        signature = base64.b64encode(self.log_id[:4] + self._sign(note.encode())).decode()
        return f"{note}\n\u2014 {self.origin.replace(' ', '-')} {signature}\n"

    def _sign(self, data: bytes) -> bytes:
        return self._key.sign(data, ec.ECDSA(hashes.SHA256()))


def _dsse_body(proposed: Any) -> dict[str, Any]:
    """The canonical body Rekor keeps for a proposed ``dsse`` entry."""
    try:
        if (proposed["kind"], proposed["apiVersion"]) != ("dsse", "0.0.1"):
            raise ValueError(f"entries of kind {proposed['kind']} are not accepted here")
        content = proposed["spec"]["proposedContent"]
        text = str(content["envelope"])
        envelope = json.loads(text)
        payload = base64.b64decode(envelope["payload"])
        kind = str(envelope["payloadType"])
        signatures = [base64.b64decode(s["sig"]) for s in envelope["signatures"]]
        verifiers = [str(v) for v in content["verifiers"]]
        cert = x509.load_pem_x509_certificate(base64.b64decode(verifiers[0]))
    except (KeyError, TypeError, IndexError) as error:
        raise ValueError(f"not a dsse entry ({error})") from None
    public = cert.public_key()
    if not isinstance(public, ec.EllipticCurvePublicKey) or not signatures:
        raise ValueError("the envelope is not signed with an ECDSA key")
    for signature in signatures:
        try:
            public.verify(signature, pae(kind, payload), ec.ECDSA(hashes.SHA256()))
        except InvalidSignature:
            raise ValueError("the envelope's signature does not hold") from None
    return {
        "apiVersion": "0.0.1",
        "kind": "dsse",
        "spec": {
            "envelopeHash": {"algorithm": "sha256", "value": _sha256(text.encode())},
            "payloadHash": {"algorithm": "sha256", "value": _sha256(payload)},
            "signatures": [
                {"signature": base64.b64encode(s).decode(), "verifier": verifiers[0]}
                for s in signatures
            ],
        },
    }
