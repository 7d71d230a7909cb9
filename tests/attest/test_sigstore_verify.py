"""Bundles signed through the local Fulcio (with its CT log's SCT embedded) and logged
in the local Rekor, verified by sigstore-python's own ``Verifier`` against the
stand-ins' ``trusted_root.json``. A tampered inclusion proof, another Rekor's key,
a certificate without an SCT or another workflow's signature each fail, and say why."""

from __future__ import annotations

import base64
import copy
import dataclasses
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from sigstore.models import Bundle

from tusk.attest import bundle, rekor, sigstore_verify, statement
from tusk.attest.bundle import AttestationError
from tusk.attest.identity import Expected, WorkflowIdentity
from tusk.attest.keyless import signer_from_environment
from tusk.attest.sign_run import signed_bundle
from tusk.sandbox import merkle
from tusk.sandbox.ctlog import LocalCTLog
from tusk.sandbox.fulcio import LocalFulcio, LocalIssuer
from tusk.sandbox.fulcio_server import keyless_stand_in
from tusk.sandbox.rekor import LocalRekor
from tusk.sandbox.trusted_root import trusted_root

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
CONTROL = "alice/tusk-control"
AGENT = WorkflowIdentity(
    server="https://github.com",
    repository=CONTROL,
    workflow=".github/workflows/agent.yml",
    ref="refs/heads/main",
    signer="tusk-org/tusk/.github/workflows/tusk-agent.yml@v1",
)
CLAIMS = statement.RunClaims(
    jobid="j1",
    run="n1",
    repository="alice/widgets",
    requester="alice",
    trigger="https://github.com/alice/widgets/issues/1",
    outcome="completed",
    cost_usd=None,
    head="4" * 64,
)


class StandIns:
    def __init__(self, *, sct: bool = True) -> None:
        self.ct_log = LocalCTLog(clock=lambda: NOW)
        issuer = LocalIssuer(clock=lambda: NOW)
        self.fulcio = LocalFulcio(issuer, ct_log=self.ct_log if sct else None)
        self.rekor = LocalRekor(clock=lambda: NOW)

    def sign(self, who: WorkflowIdentity = AGENT, *, logged: bool = True) -> dict[str, Any]:
        token = self.fulcio.issuer.token(who)
        return bundle.sign(
            statement.payload(CLAIMS),
            token=token,
            subject=f"repo:{who.repository}:ref:{who.ref}",
            authority=self.fulcio,
            log=self.log if logged else None,
        )

    def log(self, envelope: dict[str, Any], certificate_pem: bytes) -> dict[str, Any]:
        return rekor.bundle_entry(self.rekor.add(rekor.proposed_entry(envelope, certificate_pem)))

    def root(self, folder: Path, *, rekor_key_of: LocalRekor | None = None) -> Path:
        root = trusted_root(
            fulcio=self.fulcio,
            rekor=rekor_key_of or self.rekor,
            ct_log=self.ct_log,
            url="http://127.0.0.1:9",
        )
        path = folder / "trusted_root.json"
        path.write_text(json.dumps(root))
        return path


def check(signed: dict[str, Any], root: Path, expected: Expected | None = None) -> Any:
    return sigstore_verify.verify(
        signed,
        verifier=sigstore_verify.load(root),
        expected=expected or Expected(CONTROL),
    )


def test_a_bundle_through_the_http_stand_ins_is_verified_by_sigstore_python(
    tmp_path: Path,
) -> None:
    fulcio = LocalFulcio(LocalIssuer(), ct_log=LocalCTLog())
    with keyless_stand_in(AGENT, fulcio, LocalRekor()) as stand_in:
        assert "TUSK_REKOR_URL" in stand_in.environment
        signer = signer_from_environment("github", stand_in.environment)
        assert signer is not None and signer.log is not None
        signed = signed_bundle(statement.payload(CLAIMS), signer)
        root = requests.get(f"{stand_in.url}/trusted_root.json", timeout=10).json()
    (tmp_path / "trusted_root.json").write_text(json.dumps(root))
    entries = signed["verificationMaterial"]["tlogEntries"]
    assert [e["kindVersion"] for e in entries] == [{"kind": "dsse", "version": "0.0.1"}]
    assert entries[0]["inclusionProof"]["checkpoint"]["envelope"].startswith("tusk local rekor\n")
    loaded = Bundle.from_json(json.dumps(signed))  # the library reads it as a bundle
    assert loaded.log_entry._inner.inclusion_promise is not None
    found = check(signed, tmp_path / "trusted_root.json", Expected(CONTROL, tusk_ref="v1"))
    assert found.identity == AGENT
    assert found.established == "its transparency-log entry verified"
    assert statement.subject_digests(found.statement) == {statement.CHAIN: "4" * 64}


def test_the_entry_sits_in_a_growing_tree_and_still_verifies(tmp_path: Path) -> None:
    stand_ins = StandIns()
    for _ in range(4):
        stand_ins.sign()
    signed = stand_ins.sign()
    proof = signed["verificationMaterial"]["tlogEntries"][0]["inclusionProof"]
    assert (proof["logIndex"], proof["treeSize"], len(proof["hashes"])) == ("4", "5", 1)
    assert check(signed, stand_ins.root(tmp_path)).identity == AGENT


def test_a_tampered_inclusion_proof_fails(tmp_path: Path) -> None:
    stand_ins = StandIns()
    stand_ins.sign()
    signed = stand_ins.sign()
    tampered = copy.deepcopy(signed)
    proof = tampered["verificationMaterial"]["tlogEntries"][0]["inclusionProof"]
    proof["hashes"][0] = base64.b64encode(b"\x07" * 32).decode()
    with pytest.raises(AttestationError, match="inclusion proof contains invalid root hash"):
        check(tampered, stand_ins.root(tmp_path))
    assert check(signed, stand_ins.root(tmp_path)).identity == AGENT


def test_an_entry_signed_by_another_rekor_s_key_fails(tmp_path: Path) -> None:
    stand_ins = StandIns()
    signed = stand_ins.sign()
    root = stand_ins.root(tmp_path, rekor_key_of=LocalRekor(clock=lambda: NOW))
    with pytest.raises(AttestationError, match="invalid log entry: checkpoint: invalid signature"):
        check(signed, root)


def test_a_certificate_without_an_sct_fails(tmp_path: Path) -> None:
    stand_ins = StandIns(sct=False)
    signed = stand_ins.sign()
    with pytest.raises(
        AttestationError,
        match="failed to verify SCT on signing certificate: Certificate does not contain",
    ):
        check(signed, stand_ins.root(tmp_path))


def test_a_bundle_signed_by_another_workflow_fails(tmp_path: Path) -> None:
    stand_ins = StandIns()
    other = WorkflowIdentity(**{**AGENT.__dict__, "workflow": ".github/workflows/other.yml"})
    signed = stand_ins.sign(other)
    with pytest.raises(
        AttestationError,
        match=re.escape("wrong signer: signed by .github/workflows/other.yml, not .github/"),
    ):
        check(signed, stand_ins.root(tmp_path))
    elsewhere = WorkflowIdentity(**{**AGENT.__dict__, "repository": "mallory/control"})
    with pytest.raises(AttestationError, match="mallory/control"):
        check(stand_ins.sign(elsewhere), stand_ins.root(tmp_path))


def test_a_bundle_without_a_log_entry_is_refused_with_the_library_s_reason(
    tmp_path: Path,
) -> None:
    stand_ins = StandIns()
    with pytest.raises(AttestationError, match="expected exactly one log entry in bundle"):
        check(stand_ins.sign(logged=False), stand_ins.root(tmp_path))


def test_a_changed_statement_fails_even_with_its_entry(tmp_path: Path) -> None:
    stand_ins = StandIns()
    signed = stand_ins.sign()
    changed = json.loads(statement.payload(CLAIMS))
    changed["subject"][0]["digest"]["sha256"] = "5" * 64
    signed["dsseEnvelope"]["payload"] = base64.b64encode(json.dumps(changed).encode()).decode()
    with pytest.raises(AttestationError, match="refused it"):
        check(signed, stand_ins.root(tmp_path))


def test_rekor_refuses_an_envelope_whose_signature_does_not_hold() -> None:
    stand_ins = StandIns()
    signed = stand_ins.sign(logged=False)
    envelope = dict(signed["dsseEnvelope"], payload=base64.b64encode(b"{}").decode())
    leaf = base64.b64decode(signed["verificationMaterial"]["certificate"]["rawBytes"])
    pem = x509.load_der_x509_certificate(leaf).public_bytes(serialization.Encoding.PEM)
    with pytest.raises(ValueError, match="signature does not hold"):
        stand_ins.rekor.add(rekor.proposed_entry(envelope, pem))


def test_the_merkle_proofs_hold_for_every_leaf_of_trees_of_many_sizes() -> None:
    from types import SimpleNamespace

    from sigstore._internal.merkle import verify_merkle_inclusion

    for size in range(1, 18):
        bodies = [f"entry {i}".encode() for i in range(size)]
        leaves = [merkle.leaf_hash(b) for b in bodies]
        for index in range(size):
            proof = SimpleNamespace(
                log_index=index,
                tree_size=size,
                hashes=merkle.inclusion_proof(index, leaves),
                root_hash=merkle.root(leaves),
            )
            entry = SimpleNamespace(
                _inner=SimpleNamespace(inclusion_proof=proof, canonicalized_body=bodies[index])
            )
            verify_merkle_inclusion(entry)  # type: ignore[arg-type]


def test_the_http_rekor_answers_400_to_what_is_not_a_dsse_entry() -> None:
    with keyless_stand_in(AGENT, rekor=LocalRekor()) as stand_in:
        url = f"{stand_in.environment['TUSK_REKOR_URL']}/api/v1/log/entries"
        kind = requests.post(url, json={"kind": "hashedrekord", "apiVersion": "0.0.1"}, timeout=10)
        broken = requests.post(url, data=b"not json", timeout=10)
    assert (kind.status_code, broken.status_code) == (400, 400)
    assert "not accepted here" in kind.json()["message"]


def test_rekor_logs_an_entry_once_and_shows_it_where_its_409_says(tmp_path: Path) -> None:
    log = LocalRekor()
    fulcio = LocalFulcio(LocalIssuer(), ct_log=LocalCTLog())
    with keyless_stand_in(AGENT, fulcio, log) as stand_in:
        signer = signer_from_environment("github", stand_in.environment)
        assert signer is not None
        signed = signed_bundle(statement.payload(CLAIMS), dataclasses.replace(signer, log=None))
        leaf = base64.b64decode(signed["verificationMaterial"]["certificate"]["rawBytes"])
        pem = x509.load_der_x509_certificate(leaf).public_bytes(serialization.Encoding.PEM)
        proposed = rekor.proposed_entry(signed["dsseEnvelope"], pem)
        first = requests.post(f"{stand_in.url}/api/v1/log/entries", json=proposed, timeout=10)
        again = requests.post(f"{stand_in.url}/api/v1/log/entries", json=proposed, timeout=10)
        assert (first.status_code, again.status_code) == (201, 409)
        ((uuid, entry),) = first.json().items()
        assert again.headers["Location"] == f"/api/v1/log/entries/{uuid}"
        shown = requests.get(f"{stand_in.url}{again.headers['Location']}", timeout=10).json()
        missing = requests.get(f"{stand_in.url}/api/v1/log/entries/{'0' * 64}", timeout=10)
    assert shown[uuid]["logIndex"] == entry["logIndex"] == 0
    assert shown[uuid]["integratedTime"] == entry["integratedTime"]
    assert missing.status_code == 404


def test_a_lost_answer_from_rekor_is_found_by_sending_the_entry_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first answer is lost after the entry was logged; the repeat is answered 409
    with where the entry is, and the entry read there verifies as a fresh one would."""
    fulcio = LocalFulcio(LocalIssuer(), ct_log=LocalCTLog())
    real_post, statuses = requests.Session.post, []

    def lossy(session: requests.Session, url: str, **kwargs: Any) -> requests.Response:
        answer = real_post(session, url, **kwargs)
        if "/api/v1/log/entries" in url:
            statuses.append(answer.status_code)
            if len(statuses) == 1:
                raise requests.ConnectionError("reset after the entry was logged")
        return answer

    monkeypatch.setattr(requests.Session, "post", lossy)
    with keyless_stand_in(AGENT, fulcio, LocalRekor()) as stand_in:
        signer = signer_from_environment("github", stand_in.environment)
        assert signer is not None and signer.log is not None
        signed = signed_bundle(statement.payload(CLAIMS), signer)
        root = requests.get(f"{stand_in.url}/trusted_root.json", timeout=10).json()
    assert statuses == [201, 409]
    (tmp_path / "trusted_root.json").write_text(json.dumps(root))
    found = check(signed, tmp_path / "trusted_root.json")
    assert found.established == "its transparency-log entry verified"
