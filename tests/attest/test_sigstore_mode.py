"""``attestation: sigstore`` (opt-in): Sigstore's public-good Fulcio and Rekor whatever
the control repository's visibility, the entry always logged, the mode named on the log
issue; and the bundle stored with the job's own token when the workflow gives it, with
the bot's otherwise."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.attest.test_attest_on_github import (
    AGENT,
    CONTROL,
    JOBID,
    UNDO,
    comments,
    gh,
    undone,
    verify,
    written_up,
)
from tusk.attest.keyless import (
    GITHUB_FULCIO,
    PUBLIC_GOOD_FULCIO,
    SigningUnavailable,
    fulcio_url,
    rekor_url,
    signer_from_environment,
    sigstore_endpoints,
)
from tusk.attest.on_issue import Named, named
from tusk.attest.rekor import PUBLIC_GOOD_REKOR
from tusk.sandbox.ctlog import LocalCTLog
from tusk.sandbox.fulcio import LocalFulcio, LocalIssuer
from tusk.sandbox.fulcio_server import KeylessStandIn, keyless_stand_in
from tusk.sandbox.rekor import LocalRekor

__all__ = ["gh"]  # the local GitHub fixture, shared with the other attestation tests

ATTESTATIONS = f"/repos/{CONTROL}/attestations"


def on_actions(tmp_path: Path, visibility: str | None) -> dict[str, str]:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"repository": {"visibility": visibility}} if visibility else {}))
    return {"GITHUB_ACTIONS": "true", "GITHUB_EVENT_PATH": str(event)}


@pytest.mark.parametrize("visibility", ["public", "private", "internal", None])
def test_sigstore_signs_through_the_public_good_instance_whatever_the_visibility(
    tmp_path: Path, visibility: str | None
) -> None:
    environ = on_actions(tmp_path, visibility)
    assert sigstore_endpoints(environ) == (PUBLIC_GOOD_FULCIO, PUBLIC_GOOD_REKOR)
    assert PUBLIC_GOOD_FULCIO == "https://fulcio.sigstore.dev"
    assert PUBLIC_GOOD_REKOR == "https://rekor.sigstore.dev"
    if visibility != "public":  # auto / github never publish a private repository's certificate
        assert (fulcio_url(environ), rekor_url(environ)) == (GITHUB_FULCIO, None)
    local = {"TUSK_FULCIO_URL": "http://127.0.0.1:9", "TUSK_REKOR_URL": "http://127.0.0.1:8"}
    assert sigstore_endpoints({**environ, **local}) == ("http://127.0.0.1:9", "http://127.0.0.1:8")
    # A Fulcio named alone keeps the log: sigstore mode always logs its entry.
    only_fulcio = {**environ, "TUSK_FULCIO_URL": "http://127.0.0.1:9"}
    assert sigstore_endpoints(only_fulcio) == ("http://127.0.0.1:9", PUBLIC_GOOD_REKOR)


def test_sigstore_without_an_oidc_token_says_what_the_job_lacks(tmp_path: Path) -> None:
    for environ in ({}, on_actions(tmp_path, "private")):
        with pytest.raises(SigningUnavailable, match=r"^the job lacks id-token: write; "):
            signer_from_environment("sigstore", environ)


def stand_in_environment(stand_in: KeylessStandIn, **extra: str) -> dict[str, str]:
    return {**stand_in.environment, **extra}


def test_the_route_and_the_job_token_come_from_the_environment() -> None:
    fulcio = LocalFulcio(LocalIssuer(), ct_log=LocalCTLog())
    with keyless_stand_in(AGENT, fulcio, LocalRekor()) as stand_in:
        chosen = signer_from_environment("sigstore", stand_in_environment(stand_in))
        auto = signer_from_environment("auto", stand_in_environment(stand_in, TUSK_JOB_TOKEN=""))
        given = signer_from_environment(
            "github", stand_in_environment(stand_in, TUSK_JOB_TOKEN="job-secret")
        )
    assert chosen is not None and chosen.route == "sigstore" and chosen.log is not None
    assert chosen.store_token is None  # no job token given: the bot's stores it
    assert auto is not None and auto.route == "github" and auto.store_token is None
    assert given is not None and given.store_token is not None
    assert given.store_token.get_secret_value() == "job-secret"
    assert "job-secret" not in repr(given)


def stored_with(gh: Any) -> list[str | None]:
    """The tokens that asked the local GitHub to store an attestation."""
    return [e["token"] for e in gh.journal() if e["method"] == "POST" and e["path"] == ATTESTATIONS]


def test_a_sigstore_run_is_logged_named_stored_with_the_job_token_and_verified(
    tmp_path: Path, gh: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    fulcio = LocalFulcio(LocalIssuer(), ct_log=LocalCTLog())
    with keyless_stand_in(AGENT, fulcio, LocalRekor()) as stand_in:
        environ = stand_in_environment(stand_in, TUSK_JOB_TOKEN="job")
        signer = signer_from_environment("sigstore", environ)
        url = written_up(tmp_path, gh, signer)
        root = requests.get(f"{stand_in.url}/trusted_root.json", timeout=10).json()
    (tmp_path / "trusted_root.json").write_text(json.dumps(root))
    audit = next(c for c in comments(gh) if "<!-- tusk:attestation " in c["body"])
    assert named(comments(gh), jobid=JOBID, run="n1") == Named("sigstore", 1)
    assert "signed (mode sigstore: Sigstore's public-good instance" in audit["body"]
    assert "OIDC identity, logged in a transparency log, stored in" in audit["body"]
    assert f"stored in {CONTROL}'s attestations (id 1, by the job's token)" in audit["body"]
    assert stored_with(gh) == ["job"]
    capsys.readouterr()
    assert verify(url, tmp_path / "trusted_root.json", "--require-attestation") == 0
    out = capsys.readouterr().out
    assert "its transparency-log entry verified; checked by sigstore-python's Verifier" in out
    assert "the log issue names mode sigstore: Sigstore's public-good instance" in out


def test_without_a_job_token_the_bot_s_token_stores_the_bundle(
    tmp_path: Path, gh: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    with keyless_stand_in(AGENT) as stand_in:
        signer = signer_from_environment("github", stand_in_environment(stand_in))
        url = written_up(tmp_path, gh, signer)
        root = requests.get(f"{stand_in.url}/root.pem", timeout=10).content
    (tmp_path / "root.pem").write_bytes(root)
    audit = next(c for c in comments(gh) if "<!-- tusk:attestation " in c["body"])
    assert named(comments(gh), jobid=JOBID, run="n1") == Named("github", 1)
    assert "signed (mode github)" in audit["body"]
    assert f"stored in {CONTROL}'s attestations (id 1, by the bot's token)" in audit["body"]
    assert stored_with(gh) == ["agent"]
    capsys.readouterr()
    assert verify(url, tmp_path / "root.pem", "--require-attestation") == 0


def test_an_undo_s_continuation_is_stored_with_the_undo_job_s_own_token(
    tmp_path: Path, gh: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    fulcio = LocalFulcio(LocalIssuer())
    with keyless_stand_in(AGENT, fulcio) as run_job, keyless_stand_in(UNDO, fulcio) as undo_job:
        url = written_up(tmp_path, gh, signer_from_environment("github", run_job.environment))
        environ = stand_in_environment(undo_job, TUSK_JOB_TOKEN="job")
        undone(gh, signer_from_environment("github", environ))
        root = requests.get(f"{run_job.url}/root.pem", timeout=10).content
    (tmp_path / "root.pem").write_bytes(root)
    assert stored_with(gh) == ["agent", "job"]  # the run's (no job token given), the undo's
    assert named(comments(gh), jobid=JOBID, run="undo-u1") == Named("github", 2)
    undo_part = [c for c in comments(gh) if '"run":"undo-u1"' in c["body"].replace(" ", "")]
    assert undo_part and "(id 2, by the job's token)" in undo_part[-1]["body"]
    capsys.readouterr()
    assert verify(url, tmp_path / "root.pem", "--require-attestation") == 0
    assert "undo-u1: attestation verified" in capsys.readouterr().out
