"""The keyless-signing stand-ins over HTTP, for the demo and the tests of the job's side.

One server on 127.0.0.1 plays two endpoints a job reaches:

* ``GET /oidc/token?audience=...`` with ``Authorization: bearer <request token>``:
  Actions' OIDC token endpoint (``ACTIONS_ID_TOKEN_REQUEST_URL``), answering
  ``{"value": <token>}`` for the job it was started for;
* ``POST /api/v2/signingCert``: Fulcio's v2 API, answering the certificate chain
  (leaf first) under ``signedCertificateEmbeddedSct`` (with the local CT log's SCT
  embedded when the Fulcio has one);
* ``POST /api/v1/log/entries`` and ``GET /api/v1/log/entries/{uuid}``: Rekor's v1
  API, when a local Rekor is given (``TUSK_REKOR_URL``);
* ``POST /api/v1/timestamp``: an RFC 3161 timestamp authority's (``application/
  timestamp-query`` in, ``application/timestamp-reply`` out), when a local one is
  given (``TUSK_TSA_URL``): the route GitHub takes for a private repository.

``GET /root.pem`` hands out the PEM root Tusk's own verifier takes, and
``GET /trusted_root.json`` Sigstore's trust root (Fulcio, Rekor, CT log, TSA) that
sigstore-python's verifier takes; both are what ``tusk audit verify --trust-root`` wants.
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
from tusk.sandbox.rekor import Duplicate, LocalRekor
from tusk.sandbox.trusted_root import trusted_root
from tusk.sandbox.tsa import LocalTimestampAuthority


@dataclass(frozen=True)
class KeylessStandIn:
    url: str
    request_token: str  # what the job presents to the OIDC endpoint
    fulcio: LocalFulcio
    rekor: LocalRekor | None = None
    tsa: LocalTimestampAuthority | None = None

    @property
    def environment(self) -> dict[str, str]:
        """What a job with ``id-token: write`` has, and where its Fulcio (and Rekor, and
        timestamp authority) is."""
        return {
            "ACTIONS_ID_TOKEN_REQUEST_URL": f"{self.url}/oidc/token",
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN": self.request_token,
            "TUSK_FULCIO_URL": self.url,
            **({"TUSK_REKOR_URL": self.url} if self.rekor is not None else {}),
            **({"TUSK_TSA_URL": self.url} if self.tsa is not None else {}),
        }

    def trusted_root(self) -> dict[str, Any]:
        """Sigstore's trust root for these stand-ins: it needs a Rekor (with the Fulcio's
        CT log) or a timestamp authority, the two ways a signing time is proven."""
        if self.tsa is None and (self.rekor is None or self.fulcio.ct_log is None):
            raise ValueError(
                "a trusted root needs the stand-ins' Rekor and CT log, or a timestamp authority"
            )
        return trusted_root(fulcio=self.fulcio, rekor=self.rekor, tsa=self.tsa, url=self.url)


def _handler(stand_in: KeylessStandIn, identity: WorkflowIdentity) -> type:
    fulcio, request_token = stand_in.fulcio, stand_in.request_token

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # tokens travel here: quiet
            return

        def _answer(
            self,
            status: int,
            body: Any,
            kind: str = "application/json",
            headers: dict[str, str] | None = None,
        ) -> None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            if parts.path == "/root.pem":
                return self._answer(200, fulcio.root_pem(), "application/x-pem-file")
            if parts.path == "/trusted_root.json" and (stand_in.rekor or stand_in.tsa):
                return self._answer(200, stand_in.trusted_root())
            logged = parts.path.removeprefix("/api/v1/log/entries/")
            if logged != parts.path and stand_in.rekor is not None:
                return self._answer(*_rekor_entry(stand_in.rekor, logged))
            if parts.path != "/oidc/token":
                return self._answer(404, {"message": "Not Found"})
            given = self.headers.get("Authorization", "")
            if not secrets.compare_digest(given.encode(), f"bearer {request_token}".encode()):
                return self._answer(401, {"message": "Bad credentials"})
            audience = parse_qs(parts.query).get("audience", ["sigstore"])[-1]
            return self._answer(200, {"value": fulcio.issuer.token(identity, audience)})

        def do_POST(self) -> None:
            path = urlsplit(self.path).path
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if path == "/api/v1/timestamp" and stand_in.tsa is not None:
                if self.headers.get("Content-Type") != "application/timestamp-query":
                    return self._answer(415, {"message": "send application/timestamp-query"})
                reply = stand_in.tsa.respond(raw)
                return self._answer(200, reply, "application/timestamp-reply")
            try:
                body = json.loads(raw)
            except ValueError:
                return self._answer(400, {"message": "the body is not JSON"})
            if path == "/api/v1/log/entries" and stand_in.rekor is not None:
                return self._answer(*_rekor_add(stand_in.rekor, body))
            if path != "/api/v2/signingCert":
                return self._answer(404, {"message": "Not Found"})
            return self._answer(*_signing_cert(fulcio, body))

    return Handler


# (status, JSON body, content type, extra headers): what a route answers
Answer = tuple[int, Any, str, dict[str, str]]
JSON = "application/json"


def _rekor_add(rekor: LocalRekor, proposed: Any) -> Answer:
    try:
        return 201, rekor.add(proposed), JSON, {}
    except Duplicate as known:  # as Rekor: where the logged entry is
        where = {"Location": f"/api/v1/log/entries/{known.uuid}"}
        return 409, {"code": 409, "message": str(known)}, JSON, where
    except ValueError as error:
        return 400, {"code": 400, "message": str(error)}, JSON, {}


def _rekor_entry(rekor: LocalRekor, uuid: str) -> Answer:
    try:
        return 200, rekor.entry(uuid), JSON, {}
    except KeyError:
        return 404, {"code": 404, "message": "entry not found"}, JSON, {}


def _signing_cert(fulcio: LocalFulcio, body: Any) -> Answer:
    try:
        key = body["publicKeyRequest"]
        leaf = fulcio(
            body["credentials"]["oidcIdentityToken"],
            key["publicKey"]["content"].encode(),
            base64.b64decode(key["proofOfPossession"]),
        )
    except (KeyError, TypeError, ValueError) as error:
        return 400, {"message": str(error)}, JSON, {}
    pem = x509.load_der_x509_certificate(leaf).public_bytes(serialization.Encoding.PEM)
    chain = [pem.decode(), fulcio.root_pem().decode()]
    return 201, {"signedCertificateEmbeddedSct": {"chain": {"certificates": chain}}}, JSON, {}


@contextmanager
def keyless_stand_in(
    identity: WorkflowIdentity,
    fulcio: LocalFulcio | None = None,
    rekor: LocalRekor | None = None,
    tsa: LocalTimestampAuthority | None = None,
) -> Iterator[KeylessStandIn]:
    """The OIDC endpoint and Fulcio (and, given them, Rekor and a timestamp authority)
    for the jobs of one workflow, ``identity``, until the block ends; stand-ins for
    several workflows share one ``fulcio``, ``rekor`` and ``tsa`` (and trust root)."""
    fulcio = fulcio or LocalFulcio(LocalIssuer())
    token = secrets.token_urlsafe(24)
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    stand_in = KeylessStandIn(url, token, fulcio, rekor, tsa)
    server.RequestHandlerClass = _handler(stand_in, identity)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield stand_in
    finally:
        server.shutdown()
        server.server_close()
