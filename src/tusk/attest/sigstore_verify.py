"""A bundle verified by sigstore-python's ``Verifier`` against a ``trusted_root.json``.

The library checks what Tusk's own verifier (``tusk.attest.bundle.verify``) does
not: the transparency-log entry (Merkle inclusion proof, signed checkpoint,
inclusion promise, the entry's body against the envelope), the certificate's
embedded SCT against the root's CT logs, and the chain at the log's integrated
time. The signer's identity is a policy: the library's own classes for the
issuer and the source repository (Fulcio's v2 extensions), and Tusk's check of
the caller workflow and Tusk's ref, which no library class expresses (the
caller's ref is not known in advance).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cryptography import x509
from sigstore.errors import Error as SigstoreError
from sigstore.models import Bundle, TrustedRoot
from sigstore.verify import Verifier
from sigstore.verify.policy import AllOf, OIDCIssuerV2, OIDCSourceRepositoryURI

from tusk.attest.bundle import AttestationError, Verified
from tusk.attest.identity import Expected, identity_of, mismatch
from tusk.attest.statement import PAYLOAD_TYPE

NAME = "sigstore-python's Verifier (trusted root)"


class _Workflow:
    """The caller workflow (and Tusk's ref, when named) the certificate must bind."""

    def __init__(self, expected: Expected) -> None:
        self._expected = expected

    def verify(self, cert: x509.Certificate) -> None:
        try:
            wrong = mismatch(identity_of(cert), self._expected)
        except ValueError as error:
            wrong = str(error)
        if wrong is not None:
            raise AttestationError(f"wrong signer: {wrong}")


def load(path: Path) -> Verifier:
    """The library's verifier for the ``trusted_root.json`` at ``path``."""
    try:
        return Verifier(trusted_root=TrustedRoot.from_file(str(path)))
    except (SigstoreError, ValueError) as error:
        raise AttestationError(f"{path} is not a usable trusted root ({error})") from None


def policy_for(expected: Expected) -> AllOf:
    """The library's identity policy for the signer ``expected``."""
    return AllOf(
        [
            OIDCIssuerV2(expected.issuer),
            OIDCSourceRepositoryURI(f"https://github.com/{expected.repository}"),
            _Workflow(expected),
        ]
    )


def verify(bundle: Any, *, verifier: Verifier, expected: Expected) -> Verified:
    """The statement ``bundle`` signs, once the library accepts it; else ``AttestationError``."""
    try:
        loaded = Bundle.from_json(json.dumps(bundle))
        kind, payload = verifier.verify_dsse(loaded, policy_for(expected))
    except AttestationError:
        raise
    except (SigstoreError, ValueError) as error:
        raise AttestationError(f"{NAME} refused it: {_plain(error)}") from None
    if kind != PAYLOAD_TYPE:
        raise AttestationError(f"the envelope holds {kind}, not an in-toto statement")
    try:
        statement = json.loads(payload)
    except ValueError:
        raise AttestationError("the signed statement is not JSON") from None
    identity = identity_of(loaded.signing_certificate)
    return Verified(statement, identity, "its transparency-log entry verified", NAME)


def _plain(error: Exception) -> str:
    diagnostics = getattr(error, "diagnostics", None)
    text = str(error)
    return text if text or not callable(diagnostics) else str(diagnostics())
