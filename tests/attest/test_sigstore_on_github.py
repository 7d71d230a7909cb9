"""`tusk audit verify --trust-root trusted_root.json` on a log issue: a run signed
through the local Fulcio (SCT embedded) and logged in the local Rekor is verified by
sigstore-python's Verifier, and Tusk's own checks of the signed subjects against the
chain and transcript on the issue still apply. A PEM root keeps Tusk's verifier."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from tests.attest.test_attest_on_github import (
    AGENT,
    CONTROL,
    NOW,
    comments,
    gh,
    rewrite,
    root_file,
    verify,
    written_up,
)
from tusk.attest import rekor
from tusk.attest.identity import WorkflowIdentity
from tusk.attest.sign_run import Signer
from tusk.audit.on_issue import audit_sets, posted_transcript, transcript_digest
from tusk.sandbox.ctlog import LocalCTLog
from tusk.sandbox.fulcio import LocalFulcio, LocalIssuer
from tusk.sandbox.rekor import LocalRekor
from tusk.sandbox.trusted_root import trusted_root

__all__ = ["gh"]  # the local GitHub fixture, shared with the PEM root's tests

LIBRARY = "checked by sigstore-python's Verifier (trusted root)"


class Logged:
    """The local Fulcio with its CT log, and the local Rekor, on one clock."""

    def __init__(self) -> None:
        self.ct_log = LocalCTLog(clock=lambda: NOW)
        self.fulcio = LocalFulcio(LocalIssuer(clock=lambda: NOW), ct_log=self.ct_log)
        self.rekor = LocalRekor(clock=lambda: NOW)

    def signer(self, who: WorkflowIdentity = AGENT, *, logged: bool = True) -> Signer:
        def log(envelope: dict[str, Any], pem: bytes) -> dict[str, Any]:
            return rekor.bundle_entry(self.rekor.add(rekor.proposed_entry(envelope, pem)))

        return Signer(
            token=SecretStr(self.fulcio.issuer.token(who)),
            subject=f"repo:{who.repository}:ref:{who.ref}",
            authority=self.fulcio,
            log=log if logged else None,
        )

    def root(self, folder: Path) -> Path:
        path = folder / "trusted_root.json"
        root = trusted_root(fulcio=self.fulcio, rekor=self.rekor, url="http://127.0.0.1:9")
        path.write_text(json.dumps(root))
        return path


def test_a_logged_run_is_verified_by_sigstore_python_and_a_pem_root_keeps_tusk_s_verifier(
    tmp_path: Path, gh: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    logged = Logged()
    url = written_up(tmp_path, gh, logged.signer())
    capsys.readouterr()
    assert verify(url, logged.root(tmp_path), "--require-attestation", "--tusk-ref", "v1") == 0
    out = capsys.readouterr().out
    assert (
        f"attestation verified: signed by {CONTROL}/.github/workflows/agent.yml@refs/heads/main "
        "running tusk-org/tusk/.github/workflows/tusk-agent.yml@v1; its transparency-log "
        f"entry verified; {LIBRARY}" in out
    )
    assert verify(url, root_file(tmp_path, logged.fulcio)) == 0
    out = capsys.readouterr().out
    assert "no transparency-log entry checked (one came with it); checked by Tusk's verifier" in out


def test_a_transcript_rewritten_with_its_digest_fails_after_the_library_accepts_the_bundle(
    tmp_path: Path, gh: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    logged = Logged()
    url = written_up(tmp_path, gh, logged.signer())
    found = audit_sets(comments(gh))[0]
    transcript = next(c for c in comments(gh) if "transcript-1" in c["body"].partition("\n")[0])
    rewrite(gh, transcript, "done", "nothing happened")
    edited = transcript_digest(posted_transcript(comments(gh), found))
    audit = next(c for c in comments(gh) if "<!-- tusk:audit " in c["body"])
    assert found.transcript is not None
    rewrite(gh, audit, found.transcript, edited)  # the audit now names the new transcript
    capsys.readouterr()
    assert verify(url, logged.root(tmp_path)) == 1
    err = capsys.readouterr().err
    assert "the signed transcript digest is not the transcript's on this issue" in err


def test_a_bundle_neither_logged_nor_timestamped_fails_under_a_trusted_root(
    tmp_path: Path, gh: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    logged = Logged()
    url = written_up(tmp_path, gh, logged.signer(logged=False))
    capsys.readouterr()
    assert verify(url, logged.root(tmp_path)) == 1
    err = capsys.readouterr().err
    assert "neither a transparency-log entry nor a signed timestamp" in err


def test_another_workflow_s_logged_signature_fails_under_the_library(
    tmp_path: Path, gh: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    logged = Logged()
    other = WorkflowIdentity(**{**AGENT.__dict__, "workflow": ".github/workflows/other.yml"})
    url = written_up(tmp_path, gh, logged.signer(other))
    capsys.readouterr()
    assert verify(url, logged.root(tmp_path)) == 1
    err = capsys.readouterr().err
    assert (
        "wrong signer: signed by .github/workflows/other.yml, not .github/workflows/agent.yml"
        in err
    )


def test_an_unreadable_trusted_root_is_named(
    tmp_path: Path, gh: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    logged = Logged()
    url = written_up(tmp_path, gh, logged.signer())
    broken = tmp_path / "broken.json"
    broken.write_text('{"mediaType": "nonsense"}')
    capsys.readouterr()
    assert verify(url, broken) == 1
    assert f"{broken} is not a usable trusted root" in capsys.readouterr().err
