"""The job's signer from the Actions environment, against the local OIDC endpoint and
Fulcio over HTTP: the token asked for audience sigstore, the certificate for the
write-up's ephemeral key, the result verified with the stand-in's root."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import requests
from pydantic import SecretStr

from tusk.attest import bundle, statement
from tusk.attest.identity import Expected, WorkflowIdentity
from tusk.attest.keyless import (
    AttestationMode,
    SigningOff,
    SigningUnavailable,
    fulcio_url,
    oidc_token,
    owner_type,
    rekor_url,
    signer_from_environment,
    try_signer,
)
from tusk.attest.sign_run import signed_bundle
from tusk.errors import InputError
from tusk.sandbox.fulcio_server import keyless_stand_in

AGENT = WorkflowIdentity(
    server="https://github.com",
    repository="alice/tusk-control",
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


def test_a_job_with_an_oidc_token_signs_through_fulcio_and_verifies() -> None:
    with keyless_stand_in(AGENT) as stand_in:
        signer = signer_from_environment("auto", stand_in.environment)
        assert (
            signer is not None and signer.subject == "repo:alice/tusk-control:ref:refs/heads/main"
        )
        signed = signed_bundle(statement.payload(CLAIMS), signer)
        root = requests.get(f"{stand_in.url}/root.pem", timeout=10).content
    found = bundle.verify(
        signed, roots=bundle.load_roots(root), expected=Expected("alice/tusk-control")
    )
    assert found.identity == AGENT
    assert statement.subject_digests(found.statement) == {statement.CHAIN: "4" * 64}


def test_the_oidc_endpoint_wants_the_job_s_request_token() -> None:
    with keyless_stand_in(AGENT) as stand_in, pytest.raises(RuntimeError, match="401"):
        oidc_token(stand_in.environment["ACTIONS_ID_TOKEN_REQUEST_URL"], SecretStr("guess"))


def test_auto_off_actions_without_a_fulcio_is_off_and_off_is_off() -> None:
    assert signer_from_environment("auto", {}) is None
    with keyless_stand_in(AGENT) as stand_in:
        assert signer_from_environment("off", stand_in.environment) is None
    with pytest.raises(InputError, match="not on GitHub Actions"):
        signer_from_environment("github", {})


@pytest.mark.parametrize("mode", ["auto", "github"])
def test_a_job_without_id_token_write_says_what_it_lacks(mode: AttestationMode) -> None:
    for environ in ({"TUSK_FULCIO_URL": "http://127.0.0.1:9"}, {"GITHUB_ACTIONS": "true"}):
        with pytest.raises(SigningUnavailable, match=r"^the job lacks id-token: write; "):
            signer_from_environment(mode, environ)
    signer, unsigned = try_signer(mode, {"GITHUB_ACTIONS": "true"})
    assert signer is None and unsigned is not None and unsigned.mode == "failed"
    assert unsigned.reason.startswith("the job lacks id-token: write; its calling job")


@pytest.mark.parametrize(
    ("payload", "fulcio"),
    [
        ({"repository": {"visibility": "public"}}, "https://fulcio.sigstore.dev"),
        ({"repository": {"visibility": "private"}}, "https://fulcio.githubapp.com"),
        ({"repository": {"visibility": "internal"}}, "https://fulcio.githubapp.com"),
        ({}, "https://fulcio.githubapp.com"),
    ],
)
def test_on_github_the_fulcio_is_the_one_actions_attest_uses_for_the_visibility(
    tmp_path: Path, payload: dict[str, Any], fulcio: str
) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps(payload))
    on_actions = {"GITHUB_ACTIONS": "true", "GITHUB_EVENT_PATH": str(event)}
    assert fulcio_url(on_actions) == fulcio
    assert fulcio_url({**on_actions, "TUSK_FULCIO_URL": "http://127.0.0.1:9"}) == (
        "http://127.0.0.1:9"
    )
    assert fulcio_url({"GITHUB_EVENT_PATH": str(event)}) is None  # not on Actions


@pytest.mark.parametrize(
    ("visibility", "rekor"),
    [("public", "https://rekor.sigstore.dev"), ("private", None), ("internal", None)],
)
def test_the_public_good_fulcio_logs_in_the_public_good_rekor_and_tusk_rekor_url_wins(
    tmp_path: Path, visibility: str, rekor: str | None
) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"repository": {"visibility": visibility}}))
    on_actions = {"GITHUB_ACTIONS": "true", "GITHUB_EVENT_PATH": str(event)}
    assert rekor_url(on_actions) == rekor
    local = {"TUSK_FULCIO_URL": "http://127.0.0.1:9"}
    assert rekor_url({**on_actions, **local}) is None  # another Fulcio: no log unless named
    assert rekor_url({**on_actions, **local, "TUSK_REKOR_URL": "http://127.0.0.1:8"}) == (
        "http://127.0.0.1:8"
    )
    assert rekor_url({}) is None


def test_a_stand_in_without_a_rekor_signs_without_a_log_entry() -> None:
    with keyless_stand_in(AGENT) as stand_in:
        assert "TUSK_REKOR_URL" not in stand_in.environment
        signer = signer_from_environment("github", stand_in.environment)
        assert signer is not None and signer.log is None
        signed = signed_bundle(statement.payload(CLAIMS), signer)
    assert signed["verificationMaterial"]["tlogEntries"] == []


def test_on_github_an_organization_s_private_repository_still_signs_through_github_s_fulcio(
    tmp_path: Path,
) -> None:
    event = tmp_path / "event.json"
    owner = {"login": "acme", "type": "Organization"}
    event.write_text(json.dumps({"repository": {"visibility": "private", "owner": owner}}))
    on_actions = {"GITHUB_ACTIONS": "true", "GITHUB_EVENT_PATH": str(event)}
    assert owner_type(on_actions) == "Organization"
    with pytest.raises(SigningUnavailable, match="lacks id-token: write"):  # it tries
        signer_from_environment("auto", on_actions)
    event.write_text(
        json.dumps({"repository": {"visibility": "private", "owner": {"type": "User"}}})
    )
    with pytest.raises(SigningOff, match="not available to a user-owned private repository"):
        signer_from_environment("auto", on_actions)
    event.write_text(
        json.dumps({"repository": {"visibility": "public", "owner": {"type": "User"}}})
    )
    with pytest.raises(SigningUnavailable, match="lacks id-token: write"):  # public: it tries
        signer_from_environment("auto", on_actions)
