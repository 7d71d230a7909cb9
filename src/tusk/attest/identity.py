"""The GitHub Actions identity a signing certificate binds, as Fulcio writes it.

Fulcio puts the OIDC token's claims in X.509 extensions under
1.3.6.1.4.1.57264.1 (each a DER UTF8String) and the workflow that ran the job
(``job_workflow_ref``: Tusk's reusable workflow) in the subject alternative
name. For Tusk the caller, the control repository's agent workflow, is the
Build Config URI; Tusk's own workflow and its ref are the Build Signer URI.
Pure: read an identity from a certificate, and judge it against what the
operator expects.
"""

from __future__ import annotations

from dataclasses import dataclass

from cryptography import x509

GITHUB_ISSUER = "https://token.actions.githubusercontent.com"
FULCIO = "1.3.6.1.4.1.57264.1"
ISSUER = x509.ObjectIdentifier(f"{FULCIO}.8")
BUILD_SIGNER_URI = x509.ObjectIdentifier(f"{FULCIO}.9")
BUILD_SIGNER_DIGEST = x509.ObjectIdentifier(f"{FULCIO}.10")
RUNNER_ENVIRONMENT = x509.ObjectIdentifier(f"{FULCIO}.11")
SOURCE_REPOSITORY_URI = x509.ObjectIdentifier(f"{FULCIO}.12")
SOURCE_REPOSITORY_REF = x509.ObjectIdentifier(f"{FULCIO}.14")
BUILD_CONFIG_URI = x509.ObjectIdentifier(f"{FULCIO}.18")
BUILD_TRIGGER = x509.ObjectIdentifier(f"{FULCIO}.20")
RUN_INVOCATION_URI = x509.ObjectIdentifier(f"{FULCIO}.21")


@dataclass(frozen=True)
class WorkflowIdentity:
    """The claims of one Actions job, as the certificate carries them."""

    server: str  # https://github.com
    repository: str  # the control repository, owner/name
    workflow: str  # its caller of Tusk's workflow, .github/workflows/agent.yml
    ref: str  # the control repository's ref the workflow ran at
    signer: str  # job_workflow_ref: owner/tusk/.github/workflows/tusk-agent.yml@v1
    sha: str = ""
    event: str = ""
    run_url: str = ""
    issuer: str = GITHUB_ISSUER

    @property
    def signer_uri(self) -> str:
        return f"{self.server}/{self.signer}"

    @property
    def config_uri(self) -> str:
        return f"{self.server}/{self.repository}/{self.workflow}@{self.ref}"

    @property
    def tusk_ref(self) -> str:
        """The ref of Tusk's workflow the job ran (what follows ``@`` in the signer)."""
        return self.signer.rpartition("@")[2]


def der_utf8(value: str) -> bytes:
    """A DER UTF8String: how Fulcio's v2 extensions hold their text."""
    data = value.encode()
    if len(data) < 0x80:
        return bytes([0x0C, len(data)]) + data
    size = len(data).to_bytes((len(data).bit_length() + 7) // 8, "big")
    return bytes([0x0C, 0x80 | len(size)]) + size + data


def _utf8(der: bytes) -> str:
    if len(der) < 2 or der[0] != 0x0C:
        raise ValueError("not a DER UTF8String")
    size, at = der[1], 2
    if size & 0x80:
        count = size & 0x7F
        size, at = int.from_bytes(der[2 : 2 + count], "big"), 2 + count
    return der[at : at + size].decode()


def extensions(identity: WorkflowIdentity) -> dict[x509.ObjectIdentifier, str]:
    """The Fulcio extensions a certificate for ``identity`` carries."""
    return {
        ISSUER: identity.issuer,
        BUILD_SIGNER_URI: identity.signer_uri,
        BUILD_SIGNER_DIGEST: identity.sha,
        RUNNER_ENVIRONMENT: "github-hosted",
        SOURCE_REPOSITORY_URI: f"{identity.server}/{identity.repository}",
        SOURCE_REPOSITORY_REF: identity.ref,
        BUILD_CONFIG_URI: identity.config_uri,
        BUILD_TRIGGER: identity.event,
        RUN_INVOCATION_URI: identity.run_url,
    }


def identity_of(cert: x509.Certificate) -> WorkflowIdentity:
    """The identity a certificate binds. Raises ``ValueError`` when it is no Actions identity."""
    found: dict[str, str] = {}
    for ext in cert.extensions:
        if ext.oid.dotted_string.startswith(FULCIO + ".") and isinstance(
            ext.value, x509.UnrecognizedExtension
        ):
            found[ext.oid.dotted_string] = _utf8(ext.value.value)
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName)
        uris = san.value.get_values_for_type(x509.UniformResourceIdentifier)
    except x509.ExtensionNotFound:
        uris = []
    source = found.get(SOURCE_REPOSITORY_URI.dotted_string, "")
    config = found.get(BUILD_CONFIG_URI.dotted_string, "")
    signer_uri = found.get(BUILD_SIGNER_URI.dotted_string, "")
    if not (source and config and signer_uri and uris):
        raise ValueError("the certificate names no GitHub Actions workflow")
    server, _, repository = source.partition("://")[2].partition("/")
    server = source.partition("://")[0] + "://" + server
    path, _, ref = config.removeprefix(source + "/").partition("@")
    if signer_uri not in uris:
        raise ValueError("the certificate's name and its build signer disagree")
    return WorkflowIdentity(
        server=server,
        repository=repository,
        workflow=path,
        ref=ref,
        signer=signer_uri.removeprefix(server + "/"),
        sha=found.get(BUILD_SIGNER_DIGEST.dotted_string, ""),
        event=found.get(BUILD_TRIGGER.dotted_string, ""),
        run_url=found.get(RUN_INVOCATION_URI.dotted_string, ""),
        issuer=found.get(ISSUER.dotted_string, ""),
    )


@dataclass(frozen=True)
class Expected:
    """Who may have signed: the control repository's agent workflow, at a Tusk ref or any."""

    repository: str
    workflow: str = ".github/workflows/agent.yml"  # what tusk init writes
    tusk_ref: str | None = None
    issuer: str = GITHUB_ISSUER


def mismatch(identity: WorkflowIdentity, expected: Expected) -> str | None:
    """Why ``identity`` is not the one expected, or None when it is."""
    if identity.issuer != expected.issuer:
        return f"issued by {identity.issuer}, not {expected.issuer}"
    if identity.repository.lower() != expected.repository.lower():
        return f"signed by a workflow of {identity.repository}, not of {expected.repository}"
    if identity.workflow != expected.workflow:
        return f"signed by {identity.workflow}, not {expected.workflow}"
    if expected.tusk_ref is not None and identity.tusk_ref != expected.tusk_ref:
        return f"Tusk's workflow ran at {identity.tusk_ref}, not {expected.tusk_ref}"
    return None
