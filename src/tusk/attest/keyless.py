"""The job's signer, from the Actions environment: its OIDC token and a Fulcio.

With ``permissions: id-token: write`` a job gets ``ACTIONS_ID_TOKEN_REQUEST_URL``
and ``ACTIONS_ID_TOKEN_REQUEST_TOKEN``; asking that URL with audience
``sigstore`` answers a token naming the workflow. Fulcio
(``TUSK_FULCIO_URL``, its v2 ``signingCert`` API) turns the token and a proof of
possession into a short-lived certificate for the write-up's ephemeral key.
These are Actions' and Sigstore's endpoints, not GitHub's REST API, so they are
reached here and not through the gateway. Neither token is ever logged, and the
agent's process (whose environment is built from nothing) never has them.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Literal

import requests
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from pydantic import SecretStr

from tusk.attest.bundle import CertificateAuthority
from tusk.attest.sign_run import Signer
from tusk.errors import InputError

AttestationMode = Literal["auto", "github", "off"]
AUDIENCE = "sigstore"
TIMEOUT = 30
REQUEST_URL = "ACTIONS_ID_TOKEN_REQUEST_URL"
REQUEST_TOKEN = "ACTIONS_ID_TOKEN_REQUEST_TOKEN"
FULCIO_URL = "TUSK_FULCIO_URL"


def signer_from_environment(mode: AttestationMode, environ: Mapping[str, str]) -> Signer | None:
    """The job's signer, or None when attestation is off (``auto``: off without an
    OIDC token or a Fulcio to ask)."""
    if mode == "off":
        return None
    ready = all(environ.get(name) for name in (REQUEST_URL, REQUEST_TOKEN, FULCIO_URL))
    if not ready:
        if mode == "auto":
            return None
        raise InputError(
            f"attestation is github, but the job has no {REQUEST_URL}/{REQUEST_TOKEN} "
            f"or no {FULCIO_URL}",
            "Give the agent job `permissions: id-token: write, attestations: write` and set "
            f"{FULCIO_URL}, or set attestation: off in tusk.yml.",
        )
    token = oidc_token(environ[REQUEST_URL], SecretStr(environ[REQUEST_TOKEN]))
    return Signer(token=token, subject=subject_of(token), authority=fulcio(environ[FULCIO_URL]))


def try_signer(mode: AttestationMode, environ: Mapping[str, str]) -> tuple[Signer | None, str]:
    """``signer_from_environment``, or None and why it could not be had (a command
    signs what it can, and says when it could not)."""
    try:
        return signer_from_environment(mode, environ), ""
    except Exception as error:
        return None, type(error).__name__


def _session() -> requests.Session:
    """As the gateway's: no proxy variables or .netrc, which could redirect a token."""
    session = requests.Session()
    session.trust_env = False
    return session


def oidc_token(url: str, request_token: SecretStr, audience: str = AUDIENCE) -> SecretStr:
    joiner = "&" if "?" in url else "?"
    answer = _session().get(
        f"{url}{joiner}audience={audience}",
        headers={"Authorization": f"bearer {request_token.get_secret_value()}"},
        timeout=TIMEOUT,
    )
    if answer.status_code != 200:
        raise RuntimeError(f"the Actions OIDC endpoint answered {answer.status_code}")
    return SecretStr(str(answer.json()["value"]))


def subject_of(token: SecretStr) -> str:
    """The token's ``sub`` claim (read, not verified: Fulcio verifies the token)."""
    body = token.get_secret_value().split(".")[1]
    return str(json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))["sub"])


def fulcio(base: str) -> CertificateAuthority:
    """A ``CertificateAuthority`` asking the Fulcio at ``base`` (v2 ``signingCert``)."""

    def issue(token: str, public_pem: bytes, proof: bytes) -> bytes:
        answer = _session().post(
            f"{base.rstrip('/')}/api/v2/signingCert",
            json={
                "credentials": {"oidcIdentityToken": token},
                "publicKeyRequest": {
                    "publicKey": {"algorithm": "ECDSA", "content": public_pem.decode()},
                    "proofOfPossession": base64.b64encode(proof).decode(),
                },
            },
            timeout=TIMEOUT,
        )
        if answer.status_code not in (200, 201):
            raise RuntimeError(f"Fulcio refused the certificate ({answer.status_code})")
        body = answer.json()
        signed = body.get("signedCertificateEmbeddedSct") or body["signedCertificateDetachedSct"]
        leaf = signed["chain"]["certificates"][0]
        cert = x509.load_pem_x509_certificate(leaf.encode())
        return cert.public_bytes(serialization.Encoding.DER)

    return issue
