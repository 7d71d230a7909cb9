"""Local stand-ins for keyless signing: GitHub's OIDC issuer and Fulcio.

``LocalIssuer`` mints ES256 tokens carrying an Actions job's claims (the ones
Fulcio reads: ``job_workflow_ref``, ``workflow_ref``, ``repository``, ``ref`` ...).
``LocalFulcio`` plays the certificate authority: it checks the token's
signature, audience and expiry and the caller's proof of possession, then
issues a short-lived code-signing certificate for the caller's key that binds
the workflow identity with Fulcio's own extensions
(``tusk.attest.identity.extensions``). Its root certificate is the test trust root.
Clocks are injected; nothing here reaches the internet.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature,
    encode_dss_signature,
)
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from tusk.attest.identity import WorkflowIdentity, der_utf8, extensions
from tusk.sandbox.ctlog import POISON, LocalCTLog, sct_extension

Clock = Callable[[], datetime]
AUDIENCE = "sigstore"
LIFETIME = timedelta(minutes=10)  # Fulcio's certificates live ten minutes


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class LocalIssuer:
    """Plays token.actions.githubusercontent.com for one test or demo."""

    url = "https://token.actions.githubusercontent.com"

    def __init__(self, clock: Clock | None = None) -> None:
        self._key = ec.generate_private_key(ec.SECP256R1())
        self.clock = clock or (lambda: datetime.now(UTC))

    def token(self, identity: WorkflowIdentity, audience: str = AUDIENCE) -> str:
        now = int(self.clock().timestamp())
        claims = {
            "iss": self.url,
            "aud": audience,
            "sub": f"repo:{identity.repository}:ref:{identity.ref}",
            "iat": now,
            "exp": now + 300,
            "repository": identity.repository,
            "ref": identity.ref,
            "sha": identity.sha,
            "event_name": identity.event,
            "workflow_ref": f"{identity.repository}/{identity.workflow}@{identity.ref}",
            "job_workflow_ref": identity.signer,
            "job_workflow_sha": identity.sha,
            "run_url": identity.run_url,
        }
        head = _b64url(json.dumps({"alg": "ES256", "typ": "JWT"}).encode())
        body = _b64url(json.dumps(claims).encode())
        der = self._key.sign(f"{head}.{body}".encode(), ec.ECDSA(hashes.SHA256()))
        r, s = decode_dss_signature(der)
        return f"{head}.{body}.{_b64url(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"

    def claims(self, token: str) -> dict[str, object]:
        """The token's claims once its signature holds; ``ValueError`` otherwise."""
        try:
            head, body, sig = token.split(".")
            raw = _unb64url(sig)
            der = encode_dss_signature(int.from_bytes(raw[:32]), int.from_bytes(raw[32:]))
            self._key.public_key().verify(der, f"{head}.{body}".encode(), ec.ECDSA(hashes.SHA256()))
            claims = json.loads(_unb64url(body))
        except (ValueError, InvalidSignature) as error:
            raise ValueError("the OIDC token's signature does not hold") from error
        if not isinstance(claims, dict):
            raise ValueError("the OIDC token holds no claims")
        return claims


class LocalFulcio:
    """A certificate authority that binds an OIDC identity to a key, as Fulcio does."""

    def __init__(
        self, issuer: LocalIssuer, clock: Clock | None = None, ct_log: LocalCTLog | None = None
    ) -> None:
        self.issuer = issuer
        self.clock = clock or issuer.clock
        self.ct_log = ct_log  # when given, every certificate embeds its SCT
        self._key = ec.generate_private_key(ec.SECP384R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "tusk local fulcio root")])
        now = self.clock()
        self.root = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(days=1))
            .not_valid_after(now + timedelta(days=365))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(_usage(cert_sign=True), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(self._key.public_key()), False)
            .sign(self._key, hashes.SHA384())
        )

    def root_pem(self) -> bytes:
        return self.root.public_bytes(serialization.Encoding.PEM)

    def __call__(self, token: str, public_pem: bytes, proof: bytes) -> bytes:
        """The leaf certificate (DER) for the key in ``public_pem``."""
        claims = self.issuer.claims(token)
        now = self.clock()
        if claims.get("aud") != AUDIENCE:
            raise ValueError(f"the OIDC token is for {claims.get('aud')!r}, not {AUDIENCE!r}")
        if int(str(claims.get("exp", 0))) < now.timestamp():
            raise ValueError("the OIDC token has expired")
        public = serialization.load_pem_public_key(public_pem)
        if not isinstance(public, ec.EllipticCurvePublicKey):
            raise ValueError("only ECDSA keys are certified")
        try:
            public.verify(proof, str(claims["sub"]).encode(), ec.ECDSA(hashes.SHA256()))
        except (KeyError, InvalidSignature):
            raise ValueError("no proof of possession of the key") from None
        identity = identity_from_claims(claims)
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([]))
            .issuer_name(self.root.subject)
            .public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now)
            .not_valid_after(now + LIFETIME)
            .add_extension(
                x509.SubjectAlternativeName([x509.UniformResourceIdentifier(identity.signer_uri)]),
                critical=True,
            )
            .add_extension(_usage(cert_sign=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self._key.public_key()), False
            )
        )
        for oid, value in extensions(identity).items():
            builder = builder.add_extension(x509.UnrecognizedExtension(oid, der_utf8(value)), False)
        if self.ct_log is not None:  # Fulcio's flow: precertificate, SCT, final certificate
            poisoned = builder.add_extension(
                x509.UnrecognizedExtension(POISON, b"\x05\x00"), critical=True
            )
            sct = self.ct_log.add_pre_chain(poisoned.sign(self._key, hashes.SHA384()), self.root)
            builder = builder.add_extension(sct_extension(sct), False)
        return builder.sign(self._key, hashes.SHA384()).public_bytes(serialization.Encoding.DER)


def _usage(*, cert_sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=not cert_sign,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=cert_sign,
        crl_sign=cert_sign,
        encipher_only=False,
        decipher_only=False,
    )


def identity_from_claims(claims: dict[str, object]) -> WorkflowIdentity:
    """The identity Fulcio derives from an Actions token's claims."""
    repository = str(claims["repository"])
    workflow_ref = str(claims["workflow_ref"])  # owner/repo/.github/workflows/x.yml@ref
    path, _, ref = workflow_ref.removeprefix(repository + "/").partition("@")
    return WorkflowIdentity(
        server="https://github.com",
        repository=repository,
        workflow=path,
        ref=ref,
        signer=str(claims["job_workflow_ref"]),
        sha=str(claims.get("job_workflow_sha") or ""),
        event=str(claims.get("event_name") or ""),
        run_url=str(claims.get("run_url") or ""),
        issuer=str(claims["iss"]),
    )
