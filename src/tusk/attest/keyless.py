"""The job's signer, from the Actions environment: its OIDC token and a Fulcio.

With ``permissions: id-token: write`` a job gets ``ACTIONS_ID_TOKEN_REQUEST_URL``
and ``ACTIONS_ID_TOKEN_REQUEST_TOKEN``; asking that URL with audience
``sigstore`` answers a token naming the workflow. Fulcio
(``TUSK_FULCIO_URL``, its v2 ``signingCert`` API) turns the token and a proof of
possession into a short-lived certificate for the write-up's ephemeral key.
On GitHub (no ``TUSK_FULCIO_URL``) the Fulcio is the one GitHub's own artifact
attestations use (``actions/attest``): Sigstore's public-good instance for a
public control repository, GitHub's own instance for a private or internal one
(the repository's visibility read from the event, as ``actions/attest`` does).
The public-good one logs the signature in Rekor; GitHub's keeps no log, and its
timestamp authority (``TUSK_TSA_URL`` names another) stamps the signature instead.
``TUSK_FULCIO_URL`` names another, such as the local stand-in.
``attestation: sigstore`` (opt-in only) always signs through the public-good
Fulcio and logs in the public-good Rekor, whatever the visibility: for a private
repository that publishes the certificate (repository, workflow) to a public log.
``TUSK_JOB_TOKEN`` (the job's ``github.token``, given by the workflow to the step
that signs) stores the bundle; without it the caller's gateway (the bot's) does.
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
from tusk.attest.rekor import PUBLIC_GOOD_REKOR, REKOR_URL, rekor
from tusk.attest.sign_run import Attested, Signer
from tusk.attest.timestamp import GITHUB_TSA, TSA_URL, timestamp_authority
from tusk.errors import InputError

AttestationMode = Literal["auto", "github", "sigstore", "off"]
AUDIENCE = "sigstore"
TIMEOUT = 30
REQUEST_URL = "ACTIONS_ID_TOKEN_REQUEST_URL"
REQUEST_TOKEN = "ACTIONS_ID_TOKEN_REQUEST_TOKEN"
FULCIO_URL = "TUSK_FULCIO_URL"
JOB_TOKEN = "TUSK_JOB_TOKEN"  # the job's github.token, for the attestations API
PUBLIC_GOOD_FULCIO = "https://fulcio.sigstore.dev"  # actions/attest: public repositories
GITHUB_FULCIO = "https://fulcio.githubapp.com"  # actions/attest: private and internal ones
LACKS_ID_TOKEN = (
    "the job lacks id-token: write; its calling job must grant id-token: write "
    "and attestations: write, as tusk init's callers do"
)


NOT_ON_PLAN = (
    "GitHub's artifact attestations are not available to a user-owned private "
    "repository (only to public ones, and to private ones of an organization on GitHub "
    "Enterprise Cloud); attestation: sigstore signs through Sigstore's public log instead, "
    "which discloses the repository"
)


class SigningUnavailable(RuntimeError):
    """The job cannot sign, for a reason safe to show on the log issue."""


class SigningOff(RuntimeError):
    """``auto`` does not sign here, for a reason safe to show on the log issue."""


def signer_from_environment(mode: AttestationMode, environ: Mapping[str, str]) -> Signer | None:
    """The job's signer, or None when attestation is off (``auto``: off without an
    OIDC token or a Fulcio to ask)."""
    if mode == "off":
        return None
    if mode == "sigstore":  # chosen explicitly: public-good Fulcio and Rekor, always logged
        return _signer(environ, *sigstore_endpoints(environ), mode, environ.get(TSA_URL))
    base = fulcio_url(environ)
    if base == GITHUB_FULCIO and owner_type(environ) == "User":  # the plan cannot store it
        raise (SigningOff if mode == "auto" else SigningUnavailable)(NOT_ON_PLAN)
    if base is None:  # neither on GitHub Actions nor a Fulcio named
        if mode == "auto":
            return None
        raise InputError(
            f"attestation is github, but the job is not on GitHub Actions and no {FULCIO_URL} "
            "is set",
            f"Set {FULCIO_URL}, or set attestation: off in tusk.yml.",
        )
    return _signer(environ, base, rekor_url(environ), "github", tsa_url(environ))


def _signer(
    environ: Mapping[str, str],
    base: str,
    log: str | None,
    route: Literal["github", "sigstore"],
    stamps: str | None = None,
) -> Signer:
    if not all(environ.get(name) for name in (REQUEST_URL, REQUEST_TOKEN)):
        raise SigningUnavailable(LACKS_ID_TOKEN)
    token = oidc_token(environ[REQUEST_URL], SecretStr(environ[REQUEST_TOKEN]))
    return Signer(
        token=token,
        subject=subject_of(token),
        authority=fulcio(base),
        log=rekor(log) if log else None,
        stamp=timestamp_authority(stamps) if stamps else None,
        route=route,
        store_token=SecretStr(environ[JOB_TOKEN]) if environ.get(JOB_TOKEN) else None,
    )


def sigstore_endpoints(environ: Mapping[str, str]) -> tuple[str, str]:
    """``attestation: sigstore``'s Fulcio and Rekor: the public-good instance's whatever
    the repository's visibility (``TUSK_FULCIO_URL`` / ``TUSK_REKOR_URL`` override each)."""
    return (
        environ.get(FULCIO_URL) or PUBLIC_GOOD_FULCIO,
        environ.get(REKOR_URL) or PUBLIC_GOOD_REKOR,
    )


def rekor_url(environ: Mapping[str, str]) -> str | None:
    """The Rekor that logs the signature: ``TUSK_REKOR_URL``; on GitHub Actions with
    ``actions/attest``'s public-good Fulcio, the public-good Rekor; otherwise none
    (GitHub's own instance, for private repositories, keeps no transparency log)."""
    if environ.get(REKOR_URL):
        return environ[REKOR_URL]
    if environ.get(FULCIO_URL) or fulcio_url(environ) != PUBLIC_GOOD_FULCIO:
        return None
    return PUBLIC_GOOD_REKOR


def tsa_url(environ: Mapping[str, str]) -> str | None:
    """The timestamp authority that stamps the signature: ``TUSK_TSA_URL``; on GitHub
    Actions with GitHub's own Fulcio (a private or internal repository, no log),
    GitHub's, as ``actions/attest`` does; otherwise none (the log's time serves)."""
    if environ.get(TSA_URL):
        return environ[TSA_URL]
    if environ.get(FULCIO_URL) or fulcio_url(environ) != GITHUB_FULCIO:
        return None
    return GITHUB_TSA


def fulcio_url(environ: Mapping[str, str]) -> str | None:
    """The Fulcio to ask: ``TUSK_FULCIO_URL``; on GitHub Actions, the one ``actions/attest``
    uses for the repository's visibility; otherwise None."""
    if environ.get(FULCIO_URL):
        return environ[FULCIO_URL]
    if environ.get("GITHUB_ACTIONS") != "true":
        return None
    return PUBLIC_GOOD_FULCIO if visibility(environ) == "public" else GITHUB_FULCIO


def visibility(environ: Mapping[str, str]) -> str:
    """The repository's visibility in the event's payload (empty when it names none)."""
    return str(_repository(environ).get("visibility") or "")


def owner_type(environ: Mapping[str, str]) -> str:
    """Whether the event's repository is a ``User``'s or an ``Organization``'s (or empty)."""
    owner = _repository(environ).get("owner")
    return str(owner.get("type") or "") if isinstance(owner, dict) else ""


def _repository(environ: Mapping[str, str]) -> dict[str, object]:
    path = environ.get("GITHUB_EVENT_PATH")
    if not path:
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            event = json.load(handle)
    except (OSError, ValueError):
        return {}
    repository = event.get("repository") if isinstance(event, dict) else None
    return repository if isinstance(repository, dict) else {}


def try_signer(
    mode: AttestationMode, environ: Mapping[str, str]
) -> tuple[Signer | None, Attested | None]:
    """``signer_from_environment``, or None and what the record says instead (a command
    signs what it can, and says when it did not)."""
    try:
        signer = signer_from_environment(mode, environ)
    except Exception as error:
        return None, unsigned(error)
    return signer, None if signer is not None else Attested(mode="off")


def unsigned(error: Exception) -> Attested:
    """What the log issue says of a signer that could not be had: off for ``auto`` where
    signing cannot work, else failed, with the reason when it is one of ours (safe to
    show), else only the error's kind."""
    if isinstance(error, SigningOff):
        return Attested(mode="off", reason=str(error))
    return Attested(mode="failed", reason=failure_reason(error))


def failure_reason(error: Exception) -> str:
    ours = isinstance(error, SigningUnavailable | SigningOff)
    return str(error) if ours else type(error).__name__


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
