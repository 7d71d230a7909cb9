"""GitHub's route for a private control repository: GitHub's own Fulcio, no
transparency log, the signature stamped by a timestamp authority (RFC 3161).
The local stand-ins play that route; `tusk audit verify --trust-root
trusted_root.json` checks such a bundle by its timestamp (rfc3161-client), its
chain at the stamped time, its signature and its signer. The stand-in's tokens
are also accepted by sigstore-python's own timestamp check."""

from __future__ import annotations

import base64
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from rfc3161_client import TimestampRequestBuilder, decode_timestamp_response
from rfc3161_client.tsp import PKIStatus
from sigstore.models import Bundle, TrustedRoot
from sigstore.verify import Verifier

from tests.attest.test_attest_on_github import (
    AGENT,
    CONTROL,
    NOW,
    comments,
    gh,
    rewrite,
    verify,
    written_up,
)
from tests.attest.test_sigstore_on_github import Logged
from tests.attest.test_sigstore_verify import CLAIMS
from tusk.attest import bundle, rekor, statement, timestamp_verify, trust_roots
from tusk.attest.bundle import AttestationError
from tusk.attest.identity import Expected, WorkflowIdentity
from tusk.attest.keyless import signer_from_environment, tsa_url
from tusk.attest.sign_run import Signer, signed_bundle
from tusk.attest.sigstore_verify import policy_for
from tusk.attest.timestamp import GITHUB_TSA, timestamp_authority
from tusk.audit.on_issue import audit_sets
from tusk.sandbox.ctlog import LocalCTLog
from tusk.sandbox.fulcio import LocalFulcio, LocalIssuer
from tusk.sandbox.fulcio_server import keyless_stand_in
from tusk.sandbox.rekor import LocalRekor
from tusk.sandbox.trusted_root import trusted_root
from tusk.sandbox.tsa import LocalTimestampAuthority

__all__ = ["gh"]  # the local GitHub fixture, shared with the PEM root's tests

TIMESTAMPED = "its signed timestamp verified (2026-03-01T12:00:00Z)"


class Private:
    """GitHub's instance for a private repository, played locally: a Fulcio without
    a CT log, a timestamp authority, no Rekor."""

    def __init__(self, stamped_after: timedelta = timedelta(0)) -> None:
        self.fulcio = LocalFulcio(LocalIssuer(clock=lambda: NOW))
        self.tsa = LocalTimestampAuthority(clock=lambda: NOW + stamped_after)

    def signer(self, who: WorkflowIdentity = AGENT) -> Signer:
        return Signer(
            token=SecretStr(self.fulcio.issuer.token(who)),
            subject=f"repo:{who.repository}:ref:{who.ref}",
            authority=self.fulcio,
            stamp=lambda signature: self.tsa.respond(_request(signature)),
        )

    def sign(self, who: WorkflowIdentity = AGENT) -> dict[str, Any]:
        signer = self.signer(who)
        return signed_bundle(statement.payload(CLAIMS), signer)

    def root(self, folder: Path, tsa: LocalTimestampAuthority | None = None) -> Path:
        path = folder / "trusted_root.json"
        given = trusted_root(fulcio=self.fulcio, rekor=None, tsa=tsa or self.tsa, url="http://x")
        path.write_text(json.dumps(given))
        return path


def _request(signature: bytes) -> bytes:
    return TimestampRequestBuilder().data(signature).build().as_bytes()


def check(signed: dict[str, Any], root: Path, who: Expected | None = None) -> bundle.Verified:
    return timestamp_verify.verify(
        signed, root=TrustedRoot.from_file(str(root)), expected=who or Expected(CONTROL)
    )


def test_a_private_route_bundle_through_the_http_stand_ins_is_verified_by_its_timestamp(
    tmp_path: Path,
) -> None:
    fulcio = LocalFulcio(LocalIssuer())
    with keyless_stand_in(AGENT, fulcio, tsa=LocalTimestampAuthority()) as stand_in:
        assert "TUSK_REKOR_URL" not in stand_in.environment
        signer = signer_from_environment("github", stand_in.environment)
        assert signer is not None and signer.log is None and signer.stamp is not None
        signed = signed_bundle(statement.payload(CLAIMS), signer)
        root = stand_in.trusted_root()
    assert root["tlogs"] == [] and root["ctlogs"] == [] and root["timestampAuthorities"]
    (tmp_path / "trusted_root.json").write_text(json.dumps(root))
    material = signed["verificationMaterial"]
    assert material["tlogEntries"] == []
    assert len(material["timestampVerificationData"]["rfc3161Timestamps"]) == 1
    found = check(signed, tmp_path / "trusted_root.json", Expected(CONTROL, tusk_ref="v1"))
    assert found.identity == AGENT
    assert found.established.startswith("its signed timestamp verified (")
    assert found.checked_by == timestamp_verify.NAME


def test_a_timestamped_run_on_the_local_github_is_verified_by_tusk_audit_verify(
    tmp_path: Path, gh: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    private = Private()
    url = written_up(tmp_path, gh, private.signer())
    audit = next(c for c in comments(gh) if "<!-- tusk:attestation " in c["body"])
    assert (
        "signed (mode github) with the agent workflow's OIDC identity, its signature "
        "timestamped (RFC 3161), stored in" in audit["body"]
    )
    capsys.readouterr()
    assert verify(url, private.root(tmp_path), "--require-attestation", "--tusk-ref", "v1") == 0
    out = capsys.readouterr().out
    assert (
        f"attestation verified: signed by {CONTROL}/.github/workflows/agent.yml@refs/heads/main "
        f"running tusk-org/tusk/.github/workflows/tusk-agent.yml@v1; {TIMESTAMPED}; "
        f"checked by {timestamp_verify.NAME}" in out
    )


def test_a_timestamped_run_whose_chain_was_rewritten_fails(
    tmp_path: Path, gh: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    private = Private()
    url = written_up(tmp_path, gh, private.signer())
    found = audit_sets(comments(gh))[0]
    for comment in comments(gh):
        if "<!-- tusk:audit " in comment["body"]:
            rewrite(gh, comment, found.head, "0" * 64)
    capsys.readouterr()
    assert verify(url, private.root(tmp_path)) == 1


def test_a_timestamp_from_an_authority_the_root_does_not_name_fails(tmp_path: Path) -> None:
    private = Private()
    with pytest.raises(AttestationError, match="no signed timestamp holds under the trusted"):
        check(private.sign(), private.root(tmp_path, tsa=LocalTimestampAuthority()))


def test_a_timestamp_over_another_signature_fails(tmp_path: Path) -> None:
    private = Private()
    signed, other = private.sign(), private.sign()
    signed["verificationMaterial"]["timestampVerificationData"] = other["verificationMaterial"][
        "timestampVerificationData"
    ]
    with pytest.raises(AttestationError, match="no signed timestamp holds"):
        check(signed, private.root(tmp_path))


def test_a_timestamp_after_the_certificate_expired_fails(tmp_path: Path) -> None:
    private = Private(stamped_after=timedelta(minutes=11))  # Fulcio's certificate lives ten
    with pytest.raises(AttestationError, match="does not chain to the trusted root at the stamped"):
        check(private.sign(), private.root(tmp_path))


def test_another_fulcio_s_certificate_fails_and_an_edited_statement_fails(tmp_path: Path) -> None:
    private, stranger = Private(), Private()
    root = private.root(tmp_path)
    stranger.tsa = private.tsa  # stamped by the trusted authority, certified by another Fulcio
    with pytest.raises(AttestationError, match="does not chain to the trusted root"):
        check(stranger.sign(), root)
    signed = private.sign()
    envelope = signed["dsseEnvelope"]
    envelope["payload"] = base64.b64encode(base64.b64decode(envelope["payload"]) + b" ").decode()
    with pytest.raises(AttestationError, match="the signature does not hold"):
        check(signed, root)


def test_another_workflow_s_timestamped_signature_fails(tmp_path: Path) -> None:
    private = Private()
    other = WorkflowIdentity(**{**AGENT.__dict__, "repository": "mallory/tusk-control"})
    with pytest.raises(AttestationError, match="signed by a workflow of mallory/tusk-control"):
        check(private.sign(other), private.root(tmp_path))


def test_a_bundle_with_too_many_timestamps_is_refused_before_any_is_checked(
    tmp_path: Path,
) -> None:
    private = Private()
    signed = private.sign()
    data = signed["verificationMaterial"]["timestampVerificationData"]
    data["rfc3161Timestamps"] *= timestamp_verify.MOST_TIMESTAMPS + 1
    with pytest.raises(AttestationError, match="more than any signer"):
        check(signed, private.root(tmp_path))


def test_the_stand_in_s_timestamps_are_accepted_by_sigstore_python_s_own_check(
    tmp_path: Path,
) -> None:
    """A bundle both logged and stamped, which the library loads. Its public verify
    passes on the log's time alone, so the count of timestamps it accepts is read
    from the step it takes for them: one under the stand-in's authority, none under
    another's."""
    ct_log, log = LocalCTLog(clock=lambda: NOW), LocalRekor(clock=lambda: NOW)
    fulcio = LocalFulcio(LocalIssuer(clock=lambda: NOW), ct_log=ct_log)
    tsa = LocalTimestampAuthority(clock=lambda: NOW)
    signed = bundle.sign(
        statement.payload(CLAIMS),
        token=fulcio.issuer.token(AGENT),
        subject=f"repo:{AGENT.repository}:ref:{AGENT.ref}",
        authority=fulcio,
        log=lambda envelope, pem: rekor.bundle_entry(log.add(rekor.proposed_entry(envelope, pem))),
        stamp=lambda signature: tsa.respond(_request(signature)),
    )
    loaded = Bundle.from_json(json.dumps(signed))
    trusted = Verifier(
        trusted_root=_root(tmp_path, trusted_root(fulcio=fulcio, rekor=log, tsa=tsa, url="x"))
    )
    trusted.verify_dsse(loaded, policy_for(Expected(CONTROL)))
    accepted = trusted._verify_timestamp_authority(loaded)
    assert [(a.source.name, a.time) for a in accepted] == [("TIMESTAMP_AUTHORITY", NOW)]
    other = trusted_root(fulcio=fulcio, rekor=log, tsa=LocalTimestampAuthority(), url="x")
    assert Verifier(trusted_root=_root(tmp_path, other))._verify_timestamp_authority(loaded) == []


def _root(folder: Path, given: dict[str, Any]) -> TrustedRoot:
    path = folder / "root.json"
    path.write_text(json.dumps(given))
    return TrustedRoot.from_file(str(path))


def test_a_refused_timestamp_is_a_clear_signing_failure() -> None:
    with keyless_stand_in(AGENT) as stand_in:  # no timestamp authority: not understood
        stamp = timestamp_authority(stand_in.url)
        with pytest.raises(RuntimeError, match=r"refused the request \(400\)"):
            stamp(b"signature")


def test_the_stand_in_rejects_what_it_cannot_stamp() -> None:
    answer = decode_timestamp_response(LocalTimestampAuthority().respond(b"\x30\x03\x02\x01\x01"))
    assert answer.status == PKIStatus.REJECTION
    assert answer.status_string == ["not a TimeStampReq"]


def test_on_github_a_private_repository_is_stamped_by_github_s_authority(tmp_path: Path) -> None:
    def on_actions(visibility: str) -> dict[str, str]:
        event = tmp_path / f"{visibility}.json"
        event.write_text(json.dumps({"repository": {"visibility": visibility}}))
        return {"GITHUB_ACTIONS": "true", "GITHUB_EVENT_PATH": str(event)}

    assert tsa_url(on_actions("private")) == GITHUB_TSA
    assert tsa_url(on_actions("internal")) == GITHUB_TSA
    assert tsa_url(on_actions("public")) is None  # the public-good Rekor's time serves
    local = {"TUSK_FULCIO_URL": "http://127.0.0.1:9"}
    assert tsa_url({**on_actions("private"), **local}) is None  # another Fulcio: none unless named
    assert tsa_url({**local, "TUSK_TSA_URL": "http://127.0.0.1:8"}) == "http://127.0.0.1:8"
    assert tsa_url({}) is None


def test_one_jsonl_of_both_instances_verifies_a_logged_run_and_a_timestamped_run(
    tmp_path: Path, gh: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """As ``gh attestation trusted-root`` prints them: the public-good instance's
    root and GitHub's, one per line; each bundle is checked under the one it fits."""
    public, private = Logged(), Private()
    (tmp_path / "public").mkdir()
    (tmp_path / "private").mkdir()
    lines = [public.root(tmp_path / "public"), private.root(tmp_path / "private")]
    both = tmp_path / "trusted_root.jsonl"
    both.write_text("".join(json.dumps(json.loads(p.read_text())) + "\n" for p in lines))
    signed_logged = bundle.sign(
        statement.payload(CLAIMS),
        token=public.fulcio.issuer.token(AGENT),
        subject=f"repo:{AGENT.repository}:ref:{AGENT.ref}",
        authority=public.fulcio,
        log=public.signer().log,
    )
    verifier = trust_roots.bundle_verifier(both)
    logged = verifier(signed_logged, Expected(CONTROL))
    assert logged.established == "its transparency-log entry verified"
    stamped = verifier(private.sign(), Expected(CONTROL))
    assert stamped.established == TIMESTAMPED
    only_private = trust_roots.bundle_verifier(lines[1])
    with pytest.raises(AttestationError, match="cannot check a logged bundle"):
        only_private(signed_logged, Expected(CONTROL))
    url = written_up(tmp_path, gh, private.signer())
    capsys.readouterr()
    assert verify(url, both, "--require-attestation") == 0
    out = capsys.readouterr().out
    assert (
        f"{TIMESTAMPED}; checked by {timestamp_verify.NAME}; the log issue names mode github"
        in (out)
    )


def test_a_trust_root_file_with_no_root_in_it_is_named(tmp_path: Path) -> None:
    empty = tmp_path / "trusted_root.jsonl"
    empty.write_text("{not json\n")
    with pytest.raises(AttestationError, match="is not a usable trusted root"):
        trust_roots.bundle_verifier(empty)
