"""A run's statement signed keylessly by the local Fulcio and verified with the test
trust root: the signer's identity, the root and the statement all have to hold."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from cryptography import x509

from tusk.attest import bundle, statement
from tusk.attest.identity import Expected, WorkflowIdentity, identity_of
from tusk.sandbox.fulcio import LocalFulcio, LocalIssuer

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
CONTROL = "alice/tusk-control"
AGENT = WorkflowIdentity(
    server="https://github.com",
    repository=CONTROL,
    workflow=".github/workflows/agent.yml",
    ref="refs/heads/main",
    signer="tusk-org/tusk/.github/workflows/tusk-agent.yml@v1",
    sha="a" * 40,
    event="repository_dispatch",
    run_url=f"https://github.com/{CONTROL}/actions/runs/7/attempts/1",
)
CLAIMS = statement.RunClaims(
    jobid="alice-widgets-ic-1",
    run="n1",
    repository="alice/widgets",
    requester="alice",
    trigger="https://github.com/alice/widgets/issues/1#issuecomment-1",
    outcome="completed",
    cost_usd=0.12,
    head="1" * 64,
    transcript="2" * 64,
    staged="3" * 64,
)


@pytest.fixture
def fulcio() -> LocalFulcio:
    return LocalFulcio(LocalIssuer(clock=lambda: NOW))


def signed(fulcio: LocalFulcio, who: WorkflowIdentity = AGENT, claims: Any = CLAIMS) -> Any:
    token = fulcio.issuer.token(who)
    subject = f"repo:{who.repository}:ref:{who.ref}"
    return bundle.sign(statement.payload(claims), token=token, subject=subject, authority=fulcio)


def test_a_statement_signed_by_the_agent_workflow_verifies_with_its_subjects(
    fulcio: LocalFulcio,
) -> None:
    found = bundle.verify(
        signed(fulcio), roots=[fulcio.root], expected=Expected(CONTROL, tusk_ref="v1")
    )
    assert found.identity == AGENT
    assert statement.subject_digests(found.statement) == {
        statement.CHAIN: "1" * 64,
        statement.TRANSCRIPT: "2" * 64,
        statement.STAGED: "3" * 64,
    }
    assert found.statement["predicate"]["requester"] == "alice"
    assert found.statement["predicateType"] == statement.PREDICATE_TYPE


def test_the_certificate_carries_fulcio_s_github_actions_extensions(fulcio: LocalFulcio) -> None:
    raw = signed(fulcio)["verificationMaterial"]["certificate"]["rawBytes"]
    cert = x509.load_der_x509_certificate(base64.b64decode(raw))
    oids = {ext.oid.dotted_string for ext in cert.extensions}
    # Issuer (v2), Build Signer URI, Source Repository URI, Build Config URI, Run Invocation URI
    assert {f"1.3.6.1.4.1.57264.1.{n}" for n in (8, 9, 12, 18, 21)} <= oids
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.UniformResourceIdentifier) == [
        "https://github.com/tusk-org/tusk/.github/workflows/tusk-agent.yml@v1"
    ]
    assert cert.not_valid_after_utc - cert.not_valid_before_utc == timedelta(minutes=10)
    assert identity_of(cert) == AGENT


@pytest.mark.parametrize(
    ("who", "expected", "why"),
    [
        (
            AGENT.__class__(**{**AGENT.__dict__, "repository": "mallory/tusk-control"}),
            Expected(CONTROL),
            "not of alice/tusk-control",
        ),
        (
            AGENT.__class__(**{**AGENT.__dict__, "workflow": ".github/workflows/other.yml"}),
            Expected(CONTROL),
            "signed by .github/workflows/other.yml",
        ),
        (AGENT, Expected(CONTROL, tusk_ref="v2"), "ran at v1, not v2"),
        (AGENT, Expected(CONTROL, issuer="https://issuer.example"), "issued by"),
    ],
    ids=["another_repository", "another_workflow", "another_tusk_ref", "another_issuer"],
)
def test_an_attestation_signed_by_another_identity_fails(
    fulcio: LocalFulcio, who: WorkflowIdentity, expected: Expected, why: str
) -> None:
    with pytest.raises(bundle.AttestationError, match="wrong signer") as failure:
        bundle.verify(signed(fulcio, who), roots=[fulcio.root], expected=expected)
    assert why in str(failure.value)


def test_a_certificate_from_another_authority_fails(fulcio: LocalFulcio) -> None:
    other = LocalFulcio(LocalIssuer(clock=lambda: NOW))
    with pytest.raises(bundle.AttestationError, match="does not chain to a trusted root"):
        bundle.verify(signed(other), roots=[fulcio.root], expected=Expected(CONTROL))


def test_a_statement_changed_after_signing_fails(fulcio: LocalFulcio) -> None:
    forged = signed(fulcio)
    body = json.loads(base64.b64decode(forged["dsseEnvelope"]["payload"]))
    body["subject"][0]["digest"]["sha256"] = "9" * 64
    forged["dsseEnvelope"]["payload"] = base64.b64encode(json.dumps(body).encode()).decode()
    with pytest.raises(bundle.AttestationError, match="signature does not hold"):
        bundle.verify(forged, roots=[fulcio.root], expected=Expected(CONTROL))


def test_a_bundle_tusk_cannot_read_is_named(fulcio: LocalFulcio) -> None:
    with pytest.raises(bundle.AttestationError, match="not a Sigstore bundle"):
        bundle.verify({"mediaType": "x"}, roots=[fulcio.root], expected=Expected(CONTROL))


def test_the_authority_refuses_a_token_for_another_audience(fulcio: LocalFulcio) -> None:
    token = fulcio.issuer.token(AGENT, audience="api://other")
    with pytest.raises(ValueError, match="not 'sigstore'"):
        bundle.sign(b"{}", token=token, subject="repo:x", authority=fulcio)


def test_the_authority_refuses_an_expired_token(fulcio: LocalFulcio) -> None:
    token = fulcio.issuer.token(AGENT)
    late = LocalFulcio(fulcio.issuer, clock=lambda: NOW + timedelta(hours=1))
    with pytest.raises(ValueError, match="expired"):
        bundle.sign(
            b"{}", token=token, subject=f"repo:{CONTROL}:ref:refs/heads/main", authority=late
        )


def test_the_authority_refuses_a_forged_token(fulcio: LocalFulcio) -> None:
    token = LocalIssuer(clock=lambda: NOW).token(AGENT)  # another issuer's key
    with pytest.raises(ValueError, match="signature does not hold"):
        bundle.sign(b"{}", token=token, subject="repo:x", authority=fulcio)


def test_the_authority_wants_proof_of_possession_of_the_key(fulcio: LocalFulcio) -> None:
    token = fulcio.issuer.token(AGENT)
    with pytest.raises(ValueError, match="proof of possession"):
        bundle.sign(b"{}", token=token, subject="repo:someone-else", authority=fulcio)


def test_a_statement_without_staged_writes_has_two_subjects() -> None:
    claims = statement.RunClaims(**{**CLAIMS.__dict__, "staged": None})
    assert [s["name"] for s in statement.statement(claims)["subject"]] == [
        "audit-chain-head:alice-widgets-ic-1",
        "transcript:alice-widgets-ic-1",
    ]
