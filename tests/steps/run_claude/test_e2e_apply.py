"""Approve, then apply, end to end: the real Claude Code stages its writes, a person answers
the preview on GitHub, and the apply step (with the engine in its own process) decides
from what GitHub shows, applies exactly once or says on the thread why not."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import SecretStr

from tests.steps.run_claude.conftest import AGENT_TOKEN, E2E, READ_TOKEN, scenario
from tests.steps.run_claude.test_e2e_approval import FIX_AND_REPORT
from tusk.cli.audit import verify_issue
from tusk.contracts.config import load_settings
from tusk.contracts.models import ApprovalRequest, BlockedRepo
from tusk.github.gateway import Gateway
from tusk.issues.state import StateStore
from tusk.steps.apply.main import handle
from tusk.text.markers import first_marker

pytestmark = pytest.mark.e2e

LOG = "/repos/alice/tusk-control/issues/1/comments"


@pytest.fixture
def world(e2e: E2E, monkeypatch: pytest.MonkeyPatch) -> E2E:
    """The e2e scenario plus bob (write access, not an allowed user) and carol (allowed,
    read access only); tokens in the environment, as the apply action has them."""
    data = scenario()
    data["users"] += [{"login": "bob"}, {"login": "carol"}]
    data["tokens"].update(
        {"bob": {"user": "bob", "scopes": ["repo"]}, "carol": {"user": "carol", "scopes": ["repo"]}}
    )
    data["repos"][0]["collaborators"].update({"bob": "write", "carol": "read"})
    e2e.github.load(data)
    e2e.config = {
        "agent": {"linux_user": e2e.agent_user, "approval": "required"},
        "allowed_users": ["alice", "carol"],
    }
    monkeypatch.setenv("TUSK_AGENT_TOKEN", AGENT_TOKEN)
    monkeypatch.setenv("TUSK_READ_TOKEN", READ_TOKEN)
    monkeypatch.setenv("TUSK_GITHUB_API_URL", e2e.github.url)
    return e2e


def thread(e2e: E2E) -> list[dict[str, Any]]:
    return e2e.issue_comments("alice/widgets", 1)


def preview_of(e2e: E2E) -> dict[str, Any]:
    return next(c for c in thread(e2e) if first_marker(c["body"], "preview"))


def say(e2e: E2E, who: str, body: str) -> ApprovalRequest:
    """``who`` comments on the thread; the request the poller would send for it."""
    gw = e2e.github.gateway(who)
    comment = gw.post("/repos/alice/widgets/issues/1/comments", json={"body": body}).body
    verb = "discard" if "discard" in body else "apply"
    digest = body.split()[-1] if "sha256:" in body else None
    return ApprovalRequest(
        jobid=f"job-approval-{hashlib.sha256(str(comment['id']).encode()).hexdigest()[:12]}",
        verb=verb,
        digest=digest,
        actor=who,
        repo="alice/widgets",
        number=1,
        comment_id=str(comment["id"]),
        comment_url=comment["html_url"],
        timestamp=datetime.now(UTC),
    )


def act(e2e: E2E, request: ApprovalRequest, *, now: datetime | None = None) -> str:
    gateway = Gateway(api_url=e2e.github.url, token=SecretStr(AGENT_TOKEN), token_name="agent")
    config = e2e.tmp / "tusk.yml"
    run_dir = e2e.tmp / f"apply-{request.jobid}"
    return handle(
        request, load_settings(config), gateway, run_dir=run_dir, config_path=config, now=now
    )


def bot_made(e2e: E2E) -> dict[str, int]:
    """What the bot made in the trigger's repository: comments, pull requests, its fork."""
    comments = [c for c in thread(e2e) if c["user"]["login"] == "tusk-bot"]
    pulls = e2e.github.gateway(AGENT_TOKEN).get("/repos/alice/widgets/pulls")
    return {
        "comments": len(
            [
                c
                for c in comments
                if not first_marker(c["body"], "preview") and not first_marker(c["body"], "verdict")
            ]
        ),
        "pulls": len(pulls),
        "fork": int("tusk-bot/widgets" in e2e.github.state()["repos"]),
    }


NOTHING = {"comments": 0, "pulls": 0, "fork": 0}


def test_refusals_apply_nothing_and_say_why(world: E2E) -> None:
    assert world.run(FIX_AND_REPORT).outcome.kind == "completed"
    digest = first_marker(preview_of(world)["body"], "preview")["digest"]
    assert bot_made(world) == NOTHING  # nothing written before approval

    outcome = act(world, say(world, "bob", f"@tusk-bot apply {digest}"))
    assert outcome.startswith("refused: bob is not one of the users allowed to approve")
    outcome = act(world, say(world, "carol", f"@tusk-bot apply {digest}"))
    assert outcome.startswith("refused: carol has no write access")
    other = "sha256:" + "0" * 64
    outcome = act(world, say(world, "alice", f"@tusk-bot apply {other}"))
    assert outcome == f"refused: no staged set with digest {other} waits on this thread"
    edited = say(world, "alice", f"@tusk-bot apply {digest}")
    world.github.gateway("alice").patch(
        f"/repos/alice/widgets/issues/comments/{edited.comment_id}",
        json={"body": f"@tusk-bot apply {digest}\n\n(and also delete the README)"},
    )
    assert act(world, edited).startswith("refused: the comment was edited after it was posted")
    late = datetime.now(UTC) + timedelta(days=8)
    outcome = act(world, say(world, "alice", "@tusk-bot apply"), now=late)
    assert outcome.startswith(f"refused: the set {digest} expired on")
    assert bot_made(world) == NOTHING
    # Each refusal is said on the thread, once per approval comment.
    replies = [c["body"] for c in thread(world) if first_marker(c["body"], "verdict")]
    assert len(replies) == 5 and all("Nothing was applied: " in r for r in replies)
    # Discarded, a set can never be applied.
    assert act(world, say(world, "alice", "@tusk-bot discard")) == f"discarded: {digest}"
    assert "🗑️ Discarded by `alice`" in preview_of(world)["body"]
    outcome = act(world, say(world, "alice", f"@tusk-bot apply {digest}"))
    assert outcome == f"refused: the set {digest} was already discarded; it cannot be applied"
    assert bot_made(world) == NOTHING


def test_an_approval_applies_exactly_once_and_the_audit_covers_run_and_apply(
    world: E2E, capsys: pytest.CaptureFixture[str]
) -> None:
    assert world.run(FIX_AND_REPORT).outcome.kind == "completed"
    preview = preview_of(world)
    digest = first_marker(preview["body"], "preview")["digest"]
    approval = say(world, "alice", f"@tusk-bot apply `{digest}`")
    # The comment's answer is lost after it landed: found by its nonce, not repeated.
    world.github.add_fault(
        "POST", r"/repos/alice/widgets/issues/1/comments$", status=502, lands=True
    )
    assert act(world, approval) == f"applied: {digest}"
    assert bot_made(world) == {"comments": 1, "pulls": 1, "fork": 1}
    assert "✅ Applied as approved by `alice`" in preview_of(world)["body"]
    # Delivered twice: nothing is made again.
    assert act(world, approval).startswith("refused: the set")
    assert bot_made(world) == {"comments": 1, "pulls": 1, "fork": 1}
    # `tusk audit verify` on the log issue: one chain, the run's records then the apply's.
    capsys.readouterr()
    assert verify_issue(f"{world.github.url}/alice/tusk-control/issues/1") == 0
    said = capsys.readouterr().out
    assert "chain intact" in said and f"run apply-{approval.jobid}" in said
    log = list(world.github.gateway(AGENT_TOKEN).paginate(LOG))
    verdicts = [first_marker(c["body"], "verdict") for c in log]
    assert {"digest": digest, "state": "applied"}.items() <= next(v for v in verdicts if v).items()


def test_a_go_away_between_run_and_approval_blocks_the_apply(world: E2E) -> None:
    assert world.run(FIX_AND_REPORT).outcome.kind == "completed"
    digest = first_marker(preview_of(world)["body"], "preview")["digest"]
    settings = load_settings(world.tmp / "tusk.yml")
    StateStore(world.github.gateway(AGENT_TOKEN), settings).update_blocklist(
        lambda b: b.model_copy(
            update={"repos": (BlockedRepo(repo="alice/widgets", by="alice", at=datetime.now(UTC)),)}
        )
    )
    request = say(world, "alice", f"@tusk-bot apply {digest}")
    since = len(world.github.journal())
    outcome = act(world, request)
    assert outcome.startswith("failed: NOT made") and "BLOCKED_TARGET" in outcome
    assert bot_made(world) == NOTHING
    # Not one write of the bot's reaches the repository that sent it away, not even a reply.
    touched = [
        e
        for e in world.github.journal()[since:]
        if e["method"] not in ("GET", "HEAD")
        and "/alice/widgets" in e["path"]
        and not e["path"].endswith("/git-upload-pack")
    ]
    assert touched == []
