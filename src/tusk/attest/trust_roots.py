"""What ``--trust-root`` names, and which verifier checks each bundle against it.

A PEM file: the root of a Fulcio, checked by Tusk's own verifier (no log, no
timestamp). A ``trusted_root.json``: one Sigstore instance's services. A
``trusted_root.jsonl``: one instance per line, as ``gh attestation trusted-root``
prints Sigstore's public-good instance and GitHub's, so one file verifies runs of
public and private control repositories alike. Under Sigstore roots a bundle
with a transparency-log entry is checked by sigstore-python's ``Verifier``, one
without by Tusk's timestamp verifier (``tusk.attest.timestamp_verify``); each
root is tried in turn and the first that accepts the bundle is the answer.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from sigstore.errors import Error as SigstoreError
from sigstore.models import TrustedRoot
from sigstore.verify import Verifier

from tusk.attest import sigstore_verify, timestamp_verify
from tusk.attest.bundle import AttestationError, Verified, load_roots, read
from tusk.attest.identity import Expected
from tusk.attest.on_issue import BundleVerifier, pem_verifier


def bundle_verifier(path: Path) -> BundleVerifier:
    """The verifier for the trust root(s) at ``path``; ``AttestationError`` when the
    file holds none Tusk can use."""
    data = path.read_bytes()
    if data.lstrip()[:1] != b"{":
        return pem_verifier(load_roots(data))
    roots = [_root(line, path) for line in _documents(data, path)]
    verifiers: dict[int, Verifier] = {}  # made on first use: the library needs a log named

    def verify(bundle: Any, expected: Expected) -> Verified:
        logged = bool(read(bundle).material.get("tlogEntries"))
        reasons = []
        for index, root in enumerate(roots):
            try:
                if not logged:
                    return timestamp_verify.verify(bundle, root=root, expected=expected)
                if index not in verifiers:
                    verifiers[index] = Verifier(trusted_root=root)
                return sigstore_verify.verify(bundle, verifier=verifiers[index], expected=expected)
            except AttestationError as error:
                reasons.append(str(error))
            except (SigstoreError, ValueError) as error:  # a root naming no transparency log
                reasons.append(f"root {index + 1} cannot check a logged bundle ({error})")
        raise AttestationError("; ".join(dict.fromkeys(reasons)))

    return verify


def _documents(data: bytes, path: Path) -> list[bytes]:
    """The one JSON document of a ``.json`` file, or each line of a ``.jsonl`` one."""
    try:
        json.loads(data)
        return [data]
    except ValueError:
        lines = [line for line in data.splitlines() if line.strip()]
    if not lines:
        raise AttestationError(f"{path} holds no trusted root")
    return lines


def _root(document: bytes, path: Path) -> TrustedRoot:
    # The library reads a trust root from a file: each line of a .jsonl becomes one.
    with tempfile.NamedTemporaryFile(suffix=".json") as handle:
        handle.write(document)
        handle.flush()
        try:
            return TrustedRoot.from_file(handle.name)
        except (SigstoreError, ValueError) as error:
            raise AttestationError(f"{path} is not a usable trusted root ({error})") from None
