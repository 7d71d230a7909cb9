"""A run written up with a signer against the local GitHub: its attestation stored
through the documented attestations API and named on the log issue, then
`tusk audit verify` from the issue alone. A chain or transcript rewritten
consistently with the bot token, or a signature by another workflow, fails."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from tusk.attest.identity import WorkflowIdentity
from tusk.attest.keyless import AttestationMode
from tusk.attest.sign_run import Signer
from tusk.audit.chain import AuditLog
from tusk.audit.on_issue import audit_sets, posted_transcript, transcript_digest
from tusk.cli.main import main as tusk_main
from tusk.contracts.models import RunMetadata
from tusk.github.once import Patience
from tusk.sandbox.fulcio import LocalFulcio, LocalIssuer
from tusk.steps.run_claude.proxy.exchanges import RECORD_FILE
from tusk.steps.run_claude.writeup import publish as writeup
from tusk.steps.run_claude.writeup.outcome import Outcome
from tusk.text.markers import job_marker

BOT = "tusk-bot"
CONTROL = "alice/tusk-control"
JOBID = "job-attest-1"
QUICK = Patience(looks=2, first_pause=0.5, sends=3)
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
AGENT = WorkflowIdentity(
    server="https://github.com",
    repository=CONTROL,
    workflow=".github/workflows/agent.yml",
    ref="refs/heads/main",
    signer="tusk-org/tusk/.github/workflows/tusk-agent.yml@v1",
)


@pytest.fixture
def gh(local_github: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    local_github.load(
        {
            "users": [{"login": "alice"}, {"login": BOT}],
            "tokens": {
                "agent": {"user": BOT, "scopes": ["repo"]},
                "read": {"user": BOT, "scopes": ["repo"]},
                # The signing job's own github.token (attestations: write).
                "job": {"user": "alice", "scopes": ["repo"]},
            },
            "repos": [
                {"name": "alice/widgets", "collaborators": {BOT: "write"}},
                {
                    "name": CONTROL,
                    "private": True,
                    "collaborators": {BOT: "write"},
                    "labels": ["workflow", "bug"],
                    "issues": [
                        {
                            "number": 1,
                            "author": BOT,
                            "title": "[Agent Log] alice/widgets #1",
                            "body": "# Task\n\n" + job_marker(JOBID),
                            "labels": ["workflow"],
                        }
                    ],
                },
            ],
        }
    )
    monkeypatch.setenv("TUSK_GITHUB_API_URL", local_github.url)
    monkeypatch.setenv("TUSK_READ_TOKEN", "read")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("TUSK_ATTEST_TRUST_ROOT", raising=False)
    return local_github


@pytest.fixture
def fulcio() -> LocalFulcio:
    return LocalFulcio(LocalIssuer(clock=lambda: NOW))


def signer(fulcio: LocalFulcio, who: WorkflowIdentity = AGENT) -> Signer:
    return Signer(
        token=SecretStr(fulcio.issuer.token(who)),
        subject=f"repo:{who.repository}:ref:{who.ref}",
        authority=fulcio,
    )


def audit_file(folder: Path, target: str) -> Path:
    path = folder / writeup.AUDIT_FILE
    path.unlink(missing_ok=True)
    log = AuditLog(path, clock=lambda: NOW)
    log.append(
        tool="create_comment",
        kind="write",
        target=target,
        args={"b": 1},
        decision="allowed",
        url=f"https://github.com/{target.replace('#', '/issues/')}#issuecomment-9",
        created="comment",
    )
    log.close()
    return path


def written_up(tmp_path: Path, gh: Any, with_signer: Signer | None) -> str:
    folder = kept_run(tmp_path, gh, Outcome(kind="completed", headline="Completed"))
    state, report = writeup.write_up(
        folder, gh.gateway("agent"), patience=QUICK, signer=with_signer
    )
    assert report.complete, report.failed
    return state.run.log_issue_url


def kept_run(
    tmp_path: Path, gh: Any, outcome: Outcome | None, signing: AttestationMode = "off"
) -> Path:
    """The run folder a run step leaves for its write-up (``outcome`` None: killed)."""
    folder = tmp_path / "run"
    folder.mkdir()
    run = RunMetadata(
        jobid=JOBID,
        repo="alice/widgets",
        trigger_url=f"{gh.url}/alice/widgets/issues/1#issuecomment-1",
        trigger_type="issue_comment",
        thread_number=1,
        log_issue_number=1,
        log_issue_url=f"{gh.url}/{CONTROL}/issues/1",
        control_repo=CONTROL,
        task_path="task.md",
        context_path="context.md",
        context_file="context.json",
    )
    state = writeup.WriteUpState(
        run=run,
        bot=BOT,
        bug_label="bug",
        outcome=outcome,
        nonce="n1",
        isolation="off",
        signing=signing,
    )
    writeup.save_state(folder, state)
    lines = [{"type": "exchange", "results": [], "answer": [{"type": "text", "text": "done"}]}]
    (folder / RECORD_FILE).write_text("".join(json.dumps(e) + "\n" for e in lines))
    audit_file(folder, "alice/widgets#1")
    return folder


def verify(url: str, root: Path, *extra: str) -> int:
    return tusk_main(["audit", "verify", url, "--trust-root", str(root), *extra])


def root_file(tmp_path: Path, fulcio: LocalFulcio) -> Path:
    path = tmp_path / "root.pem"
    path.write_bytes(fulcio.root_pem())
    return path


def comments(gh: Any) -> list[dict[str, Any]]:
    return gh.gateway("agent").get(f"/repos/{CONTROL}/issues/1/comments")


def rewrite(gh: Any, comment: dict[str, Any], old: str, new: str) -> None:
    """What the bot token can do: edit its own comment on the log issue."""
    gh.gateway("agent").patch(
        f"/repos/{CONTROL}/issues/comments/{comment['id']}",
        json={"body": comment["body"].replace(old, new)},
    )


def test_a_signed_run_is_named_on_its_log_issue_and_verified(
    tmp_path: Path, gh: Any, fulcio: LocalFulcio, capsys: pytest.CaptureFixture[str]
) -> None:
    url = written_up(tmp_path, gh, signer(fulcio))
    audit = next(c for c in comments(gh) if "<!-- tusk:audit " in c["body"])
    assert "<!-- tusk:attestation " in audit["body"]
    assert f"stored in {CONTROL}'s attestations (id 1, by the bot's token)" in audit["body"]
    head = audit_sets(comments(gh))[0].head
    stored = gh.gateway("read").get(f"/repos/{CONTROL}/attestations/sha256:{head}")
    assert len(stored["attestations"]) == 1
    capsys.readouterr()
    assert verify(url, root_file(tmp_path, fulcio), "--tusk-ref", "v1") == 0
    out = capsys.readouterr().out
    assert "chain intact" in out
    assert (
        f"attestation verified: signed by {CONTROL}/.github/workflows/agent.yml"
        "@refs/heads/main running tusk-org/tusk/.github/workflows/tusk-agent.yml@v1" in out
    )


def test_a_chain_rewritten_consistently_with_the_bot_token_fails(
    tmp_path: Path, gh: Any, fulcio: LocalFulcio, capsys: pytest.CaptureFixture[str]
) -> None:
    url = written_up(tmp_path, gh, signer(fulcio))
    audit = next(c for c in comments(gh) if "<!-- tusk:audit " in c["body"])
    found = audit_sets(comments(gh))[0]
    forged = audit_file(tmp_path, "alice/other#2").read_text(encoding="utf-8")
    new_head = json.loads(forged)["hash"]
    original = (tmp_path / "run" / writeup.AUDIT_FILE).read_text(encoding="utf-8")
    body = audit["body"].replace(original, forged).replace(found.head, new_head)
    gh.gateway("agent").patch(
        f"/repos/{CONTROL}/issues/comments/{audit['id']}", json={"body": body}
    )
    capsys.readouterr()
    assert verify(url, root_file(tmp_path, fulcio)) == 1
    captured = capsys.readouterr()
    assert "chain intact" in captured.out  # the forgery is consistent ...
    assert (  # ... but the workflow never signed it
        f"no attestation in {CONTROL} names the chain head sha256:{new_head}" in captured.err
    )


def test_a_transcript_rewritten_with_its_digest_fails(
    tmp_path: Path, gh: Any, fulcio: LocalFulcio, capsys: pytest.CaptureFixture[str]
) -> None:
    url = written_up(tmp_path, gh, signer(fulcio))
    found = audit_sets(comments(gh))[0]
    transcript = next(c for c in comments(gh) if "transcript-1" in c["body"].partition("\n")[0])
    rewrite(gh, transcript, "done", "nothing happened")
    edited = transcript_digest(posted_transcript(comments(gh), found))
    audit = next(c for c in comments(gh) if "<!-- tusk:audit " in c["body"])
    assert found.transcript is not None
    rewrite(gh, audit, found.transcript, edited)  # the audit now names the new transcript
    capsys.readouterr()
    assert verify(url, root_file(tmp_path, fulcio)) == 1
    err = capsys.readouterr().err
    assert "the signed transcript digest is not the transcript's on this issue" in err


@pytest.mark.parametrize(
    ("who", "why"),
    [
        (
            WorkflowIdentity(**{**AGENT.__dict__, "repository": "mallory/tusk-control"}),
            f"signed by a workflow of mallory/tusk-control, not of {CONTROL}",
        ),
        (
            WorkflowIdentity(**{**AGENT.__dict__, "workflow": ".github/workflows/ci.yml"}),
            "signed by .github/workflows/ci.yml, not .github/workflows/agent.yml",
        ),
    ],
    ids=["another_repository", "another_workflow"],
)
def test_an_attestation_signed_by_another_workflow_fails(
    tmp_path: Path,
    gh: Any,
    fulcio: LocalFulcio,
    capsys: pytest.CaptureFixture[str],
    who: WorkflowIdentity,
    why: str,
) -> None:
    url = written_up(tmp_path, gh, signer(fulcio, who))
    capsys.readouterr()
    assert verify(url, root_file(tmp_path, fulcio)) == 1
    assert f"attestation does not hold: wrong signer: {why}" in capsys.readouterr().err


def test_an_attestation_from_an_untrusted_authority_fails(
    tmp_path: Path, gh: Any, fulcio: LocalFulcio, capsys: pytest.CaptureFixture[str]
) -> None:
    url = written_up(tmp_path, gh, signer(fulcio))
    other = LocalFulcio(LocalIssuer(clock=lambda: NOW))
    capsys.readouterr()
    assert verify(url, root_file(tmp_path, other)) == 1
    assert "does not chain to a trusted root" in capsys.readouterr().err


def test_a_signed_run_without_a_trust_root_is_not_passed(
    tmp_path: Path, gh: Any, fulcio: LocalFulcio, capsys: pytest.CaptureFixture[str]
) -> None:
    url = written_up(tmp_path, gh, signer(fulcio))
    capsys.readouterr()
    assert tusk_main(["audit", "verify", url]) == 1
    assert "no trust root was given" in capsys.readouterr().err


def test_a_run_with_signing_off_says_so_and_fails_when_a_signature_is_required(
    tmp_path: Path, gh: Any, fulcio: LocalFulcio, capsys: pytest.CaptureFixture[str]
) -> None:
    url = written_up(tmp_path, gh, None)
    audit = next(c for c in comments(gh) if "<!-- tusk:audit " in c["body"])
    assert "not signed (attestation off)" in audit["body"]
    assert gh.gateway("read").get(
        f"/repos/{CONTROL}/attestations/sha256:{audit_sets(comments(gh))[0].head}"
    ) == {"attestations": []}
    root = root_file(tmp_path, fulcio)
    capsys.readouterr()
    assert verify(url, root) == 0
    assert "signing was off: the record is not signed" in capsys.readouterr().out
    assert verify(url, root, "--require-attestation") == 1
    assert "signing was off: the record is not signed" in capsys.readouterr().err


def test_a_rewrite_is_not_signed_again_by_a_rerun_of_the_write_up(
    tmp_path: Path, gh: Any, fulcio: LocalFulcio
) -> None:
    written_up(tmp_path, gh, signer(fulcio))
    state, report = writeup.write_up(
        tmp_path / "run", gh.gateway("agent"), patience=QUICK, signer=signer(fulcio)
    )
    assert report.complete and state.attestation is not None and state.attestation.ident == 1
    head = audit_sets(comments(gh))[0].head
    listed = gh.gateway("read").get(f"/repos/{CONTROL}/attestations/sha256:{head}")
    assert len(listed["attestations"]) == 1


def test_the_clean_up_step_signs_the_write_up_of_a_killed_run(
    tmp_path: Path,
    gh: Any,
    fulcio: LocalFulcio,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tusk.sandbox.fulcio_server import keyless_stand_in
    from tusk.steps.run_claude.writeup.kept import finish_writeup

    folder = kept_run(tmp_path, gh, None, signing="github")
    with keyless_stand_in(AGENT, fulcio) as stand_in:
        for name, value in stand_in.environment.items():
            monkeypatch.setenv(name, value)
        done = finish_writeup(folder, gateway=gh.gateway("agent"))
    assert done[0].startswith("recorded the run as cancelled (killed)")
    audit = next(c for c in comments(gh) if "<!-- tusk:audit " in c["body"])
    assert "signed (mode github) with the agent workflow's OIDC identity" in audit["body"]
    capsys.readouterr()
    url = f"{gh.url}/{CONTROL}/issues/1"
    assert verify(url, root_file(tmp_path, fulcio), "--require-attestation") == 0
    assert "attestation verified: signed by" in capsys.readouterr().out


def test_a_job_without_id_token_write_says_so_on_the_log_issue_and_completes(
    tmp_path: Path,
    gh: Any,
    fulcio: LocalFulcio,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A caller that grants only contents: read: on GitHub the job has no OIDC request
    variables; the write-up is whole and says why it is not signed."""
    from tusk.steps.run_claude.writeup.kept import finish_writeup

    folder = kept_run(tmp_path, gh, None, signing="auto")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    for name in ("ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_ID_TOKEN_REQUEST_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("TUSK_FULCIO_URL", raising=False)
    done = finish_writeup(folder, gateway=gh.gateway("agent"))
    assert done == [f"recorded the run as cancelled (killed) on {gh.url}/{CONTROL}/issues/1"]
    audit = next(c for c in comments(gh) if "<!-- tusk:audit " in c["body"])
    assert (
        "not signed: signing failed (the job lacks id-token: write; its calling job"
        in (audit["body"])
    )
    capsys.readouterr()
    url = f"{gh.url}/{CONTROL}/issues/1"
    assert verify(url, root_file(tmp_path, fulcio), "--require-attestation") == 1
    assert "signing failed: the record is not signed" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("auto", "not signed (attestation off: GitHub's artifact attestations are not available"),
        ("github", "not signed: signing failed (GitHub's artifact attestations are not available"),
    ],
)
def test_a_user_owned_private_control_repository_is_not_signed_and_says_why(
    tmp_path: Path,
    gh: Any,
    fulcio: LocalFulcio,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    mode: AttestationMode,
    said: str,
) -> None:
    """GitHub stores artifact attestations of a private repository only for an
    organization on Enterprise Cloud: for a user's, ``auto`` does not try (every run
    would fail) and says why; ``github``, asked for explicitly, fails with that reason."""
    from tusk.steps.run_claude.writeup.kept import finish_writeup

    event = tmp_path / "event.json"
    owner = {"login": "alice", "type": "User"}
    event.write_text(json.dumps({"repository": {"visibility": "private", "owner": owner}}))
    folder = kept_run(tmp_path, gh, None, signing=mode)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    monkeypatch.setenv("ACTIONS_ID_TOKEN_REQUEST_URL", "http://127.0.0.1:9/token")
    monkeypatch.setenv("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "request")
    monkeypatch.delenv("TUSK_FULCIO_URL", raising=False)
    finish_writeup(folder, gateway=gh.gateway("agent"))
    audit = next(c for c in comments(gh) if "<!-- tusk:audit " in c["body"])
    assert said in audit["body"]
    assert "attestation: sigstore signs through Sigstore's public log instead" in audit["body"]
    capsys.readouterr()
    url = f"{gh.url}/{CONTROL}/issues/1"
    assert verify(url, root_file(tmp_path, fulcio)) == 0  # not signed, and said so
    assert verify(url, root_file(tmp_path, fulcio), "--require-attestation") == 1


def test_a_signing_that_fails_is_said_on_the_log_issue_and_by_verify(
    tmp_path: Path, gh: Any, fulcio: LocalFulcio, capsys: pytest.CaptureFixture[str]
) -> None:
    def refuses(token: str, public_pem: bytes, proof: bytes) -> bytes:
        raise RuntimeError("Fulcio refused the certificate (503)")

    url = written_up(tmp_path, gh, Signer(SecretStr("t"), "repo:x", refuses))
    audit = next(c for c in comments(gh) if "<!-- tusk:audit " in c["body"])
    assert "not signed: signing failed (RuntimeError: Fulcio refused" in audit["body"]
    capsys.readouterr()
    assert verify(url, root_file(tmp_path, fulcio), "--require-attestation") == 1
    assert "signing failed: the record is not signed" in capsys.readouterr().err


UNDO = WorkflowIdentity(**{**AGENT.__dict__, "workflow": ".github/workflows/go-away.yml"})


def undone(gh: Any, with_signer: Signer | None) -> None:
    """An undo of the run, continuing its chain on the log issue as the undo step does."""
    from tusk.steps.undo.on_log_issue import record
    from tusk.steps.undo.plan import Removal, RunOnThread, UndoReport

    url = f"{gh.url}/alice/widgets/issues/1#issuecomment-9"
    report = UndoReport(
        actor="alice",
        run=RunOnThread(
            jobid=JOBID, log_issue_url=f"{gh.url}/{CONTROL}/issues/1", comment_ids=(9,)
        ),
        done=[Removal(kind="comment", repo="alice/widgets", ident="9", url=url)],
    )
    problem = record(
        gh.gateway("agent"),
        report,
        control_repo=CONTROL,
        log_number=1,
        bot=BOT,
        undo_jobid="u1",
        undo_url=f"{gh.url}/alice/widgets/issues/1#issuecomment-20",
        now=NOW,
        repo="alice/widgets",
        signing=(with_signer, None),
    )
    assert problem is None


def test_an_undo_s_continuation_is_signed_by_the_command_workflow_and_verified_with_the_run(
    tmp_path: Path, gh: Any, fulcio: LocalFulcio, capsys: pytest.CaptureFixture[str]
) -> None:
    url = written_up(tmp_path, gh, signer(fulcio))
    undone(gh, signer(fulcio, UNDO))
    capsys.readouterr()
    assert verify(url, root_file(tmp_path, fulcio), "--require-attestation") == 0
    out = capsys.readouterr().out
    assert "(run undo-u1): 2 record(s)" in out
    assert (
        f"undo-u1: attestation verified: signed by {CONTROL}/.github/workflows/go-away.yml@" in out
    )
    assert f"run n1: attestation verified: signed by {CONTROL}/.github/workflows/agent.yml@" in out


def test_an_undo_s_continuation_signed_by_the_agent_workflow_fails(
    tmp_path: Path, gh: Any, fulcio: LocalFulcio, capsys: pytest.CaptureFixture[str]
) -> None:
    url = written_up(tmp_path, gh, signer(fulcio))
    undone(gh, signer(fulcio))  # the agent workflow's identity, not the command workflow's
    capsys.readouterr()
    assert verify(url, root_file(tmp_path, fulcio)) == 1
    assert (
        "undo-u1: attestation does not hold: wrong signer: signed by "
        ".github/workflows/agent.yml, not .github/workflows/go-away.yml"
    ) in capsys.readouterr().err


def test_an_undo_of_a_rewritten_run_still_fails_on_the_run_s_own_attestation(
    tmp_path: Path, gh: Any, fulcio: LocalFulcio, capsys: pytest.CaptureFixture[str]
) -> None:
    url = written_up(tmp_path, gh, signer(fulcio))
    audit = next(c for c in comments(gh) if "<!-- tusk:audit " in c["body"])
    found = audit_sets(comments(gh))[0]
    forged = audit_file(tmp_path, "alice/other#2").read_text(encoding="utf-8")
    new_head = json.loads(forged)["hash"]
    original = (tmp_path / "run" / writeup.AUDIT_FILE).read_text(encoding="utf-8")
    body = audit["body"].replace(original, forged).replace(found.head, new_head)
    gh.gateway("agent").patch(
        f"/repos/{CONTROL}/issues/comments/{audit['id']}", json={"body": body}
    )
    undone(gh, signer(fulcio, UNDO))  # the undo seeds from, and signs, the forged chain
    capsys.readouterr()
    assert verify(url, root_file(tmp_path, fulcio)) == 1
    err = capsys.readouterr().err
    assert "undo-u1: attestation verified" in err
    assert f"run n1: no attestation in {CONTROL} names the chain head sha256:{new_head}" in err


def applied(tmp_path: Path, gh: Any, fulcio: LocalFulcio) -> str:
    """A signed run whose staged set is on its log issue, then its apply's continuation
    signed by the command workflow with the set's digest. Returns the set's digest (hex)."""
    from tusk.approval.staged_set import StagedSet, set_comments, set_digest
    from tusk.attest.statement import RunClaims
    from tusk.contracts.models import PermissionConfig
    from tusk.steps.apply import chain

    url = written_up(tmp_path, gh, signer(fulcio))
    staged = StagedSet(
        jobid=JOBID,
        repo="alice/widgets",
        trigger_url=f"{gh.url}/alice/widgets/issues/1#issuecomment-1",
        thread_number=1,
        control_repo=CONTROL,
        log_issue_number=1,
        log_issue_url=url,
        created_at=NOW,
        expires_at=NOW,
        nonce_salt="s",
        reason="staged: true",
        permissions=PermissionConfig(),
        operations=(),
    )
    for body in set_comments(staged):
        gh.gateway("agent").post(f"/repos/{CONTROL}/issues/1/comments", json={"body": body})
    digest = set_digest(staged).removeprefix("sha256:")
    path = tmp_path / "apply.jsonl"
    assert chain.seed(comments(gh), path, jobid=JOBID) == ""
    claims = RunClaims(
        jobid=JOBID,
        run="apply-a1",
        repository="alice/widgets",
        requester="alice",
        trigger=f"{gh.url}/alice/widgets/issues/1#issuecomment-30",
        outcome="applied",
        cost_usd=None,
        head="",
        staged=digest,
        step="apply",
    )
    chain.post(
        gh.gateway("agent"),
        staged,
        path,
        run="apply-a1",
        bot=BOT,
        claims=claims,
        signing=(signer(fulcio, UNDO), None),
    )
    return digest


def test_an_apply_s_continuation_is_signed_with_the_staged_set_and_verified(
    tmp_path: Path, gh: Any, fulcio: LocalFulcio, capsys: pytest.CaptureFixture[str]
) -> None:
    from tusk.attest.statement import STAGED, subject_digests

    digest = applied(tmp_path, gh, fulcio)
    url = f"{gh.url}/{CONTROL}/issues/1"
    capsys.readouterr()
    assert verify(url, root_file(tmp_path, fulcio), "--require-attestation") == 0
    out = capsys.readouterr().out
    assert (
        "apply-a1: attestation verified: signed by" in out and "run n1: attestation verified" in out
    )
    head = audit_sets(comments(gh))[-1].head
    # No write was staged, so the continued chain ends where the run's did: both name it.
    listed = gh.gateway("read").get(f"/repos/{CONTROL}/attestations/sha256:{head}")
    stored = listed["attestations"][0]  # newest first: the apply's
    payload = json.loads(base64.b64decode(stored["bundle"]["dsseEnvelope"]["payload"]))
    assert subject_digests(payload)[STAGED] == digest
    assert payload["predicate"]["step"] == "apply"


def test_a_staged_set_edited_after_it_was_signed_fails(
    tmp_path: Path, gh: Any, fulcio: LocalFulcio, capsys: pytest.CaptureFixture[str]
) -> None:
    applied(tmp_path, gh, fulcio)
    staged = next(c for c in comments(gh) if "<!-- tusk:approval " in c["body"])
    rewrite(gh, staged, '"reason":"staged: true"', '"reason":"staged: false"')
    capsys.readouterr()
    assert verify(f"{gh.url}/{CONTROL}/issues/1", root_file(tmp_path, fulcio)) == 1
    assert (
        "apply-a1: attestation does not hold: the signed staged set is not on this issue "
        "as signed (its comments were edited or removed)"
    ) in capsys.readouterr().err


def test_a_store_whose_answer_was_lost_is_found_by_its_head_and_not_sent_again(
    tmp_path: Path, gh: Any, fulcio: LocalFulcio, capsys: pytest.CaptureFixture[str]
) -> None:
    gh.add_fault("POST", rf"/repos/{CONTROL}/attestations$", status=502, lands=True)
    url = written_up(tmp_path, gh, signer(fulcio))
    head = audit_sets(comments(gh))[0].head
    stored = gh.gateway("read").get(f"/repos/{CONTROL}/attestations/sha256:{head}")
    assert len(stored["attestations"]) == 1  # found, not stored twice
    posts = [e for e in gh.journal() if e["method"] == "POST" and "/attestations" in e["path"]]
    assert len(posts) == 1
    audit = next(c for c in comments(gh) if "<!-- tusk:attestation " in c["body"])
    assert "attestations (found again by the chain head, by the bot's token)" in audit["body"]
    capsys.readouterr()
    assert verify(url, root_file(tmp_path, fulcio), "--require-attestation") == 0


def test_a_store_refused_outright_is_a_signing_failure_and_is_neither_looked_for_nor_repeated(
    tmp_path: Path, gh: Any, fulcio: LocalFulcio
) -> None:
    gh.add_fault("POST", rf"/repos/{CONTROL}/attestations$", status=404, count=None)
    written_up(tmp_path, gh, signer(fulcio))
    audit = next(c for c in comments(gh) if "<!-- tusk:attestation " in c["body"])
    assert "not signed: signing failed (" in audit["body"]
    asked = [(e["method"], e["path"]) for e in gh.journal() if "/attestations" in e["path"]]
    assert asked == [("POST", f"/repos/{CONTROL}/attestations")]
