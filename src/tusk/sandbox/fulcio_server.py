"""The keyless-signing stand-ins over HTTP, for the demo and the tests of the job's side.

One server on 127.0.0.1 plays two endpoints a job reaches:

* ``GET /oidc/token?audience=...`` with ``Authorization: bearer <request token>``:
  Actions' OIDC token endpoint (``ACTIONS_ID_TOKEN_REQUEST_URL``), answering
  ``{"value": <token>}`` for the job it was started for;
* ``POST /api/v2/signingCert``: Fulcio's v2 API, answering the certificate chain
  (leaf first) under ``signedCertificateEmbeddedSct``.

``GET /root.pem`` hands out the trust root ``tusk audit verify --trust-root`` wants.
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from tusk.attest.identity import WorkflowIdentity
from tusk.sandbox.fulcio import LocalFulcio, LocalIssuer


@dataclass(frozen=True)
class KeylessStandIn:
    url: str
    request_token: str  # what the job presents to the OIDC endpoint
    fulcio: LocalFulcio

    @property
    def environment(self) -> dict[str, str]:
        """What a job with ``id-token: write`` has, and where its Fulcio is."""
        return {
            "ACTIONS_ID_TOKEN_REQUEST_URL": f"{self.url}/oidc/token",
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN": self.request_token,
            "TUSK_FULCIO_URL": self.url,
        }


def _handler(identity: WorkflowIdentity, fulcio: LocalFulcio, request_token: str) -> type:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # tokens travel here: quiet
            return

        def _answer(self, status: int, body: Any, kind: str = "application/json") -> None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            if parts.path == "/root.pem":
                return self._answer(200, fulcio.root_pem(), "application/x-pem-file")
            if parts.path != "/oidc/token":
                return self._answer(404, {"message": "Not Found"})
            given = self.headers.get("Authorization", "")
            if not secrets.compare_digest(given.encode(), f"bearer {request_token}".encode()):
                return self._answer(401, {"message": "Bad credentials"})
            audience = parse_qs(parts.query).get("audience", ["sigstore"])[-1]
            return self._answer(200, {"value": fulcio.issuer.token(identity, audience)})

        def do_POST(self) -> None:
            if urlsplit(self.path).path != "/api/v2/signingCert":
                return self._answer(404, {"message": "Not Found"})
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                key = body["publicKeyRequest"]
                leaf = fulcio(
                    body["credentials"]["oidcIdentityToken"],
                    key["publicKey"]["content"].encode(),
                    base64.b64decode(key["proofOfPossession"]),
                )
            except (KeyError, TypeError, ValueError) as error:
                return self._answer(400, {"message": str(error)})
            pem = x509.load_der_x509_certificate(leaf).public_bytes(serialization.Encoding.PEM)
            chain = [pem.decode(), fulcio.root_pem().decode()]
            return self._answer(
                201, {"signedCertificateEmbeddedSct": {"chain": {"certificates": chain}}}
            )

    return Handler


@contextmanager
def keyless_stand_in(
    identity: WorkflowIdentity, fulcio: LocalFulcio | None = None
) -> Iterator[KeylessStandIn]:
    """The OIDC endpoint and Fulcio for the jobs of one workflow, ``identity``, until the
    block ends; stand-ins for several workflows share one ``fulcio`` (and trust root)."""
    fulcio = fulcio or LocalFulcio(LocalIssuer())
    token = secrets.token_urlsafe(24)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(identity, fulcio, token))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield KeylessStandIn(f"http://127.0.0.1:{server.server_address[1]}", token, fulcio)
    finally:
        server.shutdown()
        server.server_close()
