"""Apply and discard against the local GitHub, decided on rights GitHub confirms: write
access read from the permission endpoint on every repository the set writes to, never
``author_association``; where the bot cannot read a role, refused with why and who can."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tusk.approval.preview import preview_body
from tusk.approval.staged_set import StagedOperation, StagedSet, set_comments, set_digest
from tusk.contracts.config import Settings
from tusk.contracts.models import ApprovalRequest, PermissionConfig
from tusk.steps.apply.main import handle
from tusk.text.markers import first_marker, render_marker

BOT = "tusk-bot"
REPO = "acme/widgets"  # the thread's repository, owned by the organisation acme
TOOLS = "alice/tools"  # a second target, one of agent.write_repos
CONTROL = "ops/control"
NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
APPROVERS = ("alice", "carol", "dave", "erin")


def world(*, bot_pushes: bool) -> dict[str, Any]:
    """carol was invited to read acme/widgets and dave is a member of acme without write:
    by association a COLLABORATOR and a MEMBER. bob writes to acme/widgets and only reads
    alice/tools. Where ``bot_pushes`` is False the bot works from its fork alone."""
    people = ("alice", "bob", "carol", "dave", "erin")
    thread_people = {"carol": "read", "alice": "write", "bob": "write"}
    return {
        "users": [
            {"login": BOT},
            *({"login": login} for login in people),
            {"login": "acme", "type": "Organization", "members": ["dave"]},
            {"login": "ops"},
        ],
        "tokens": {
            "agent": {"user": BOT, "scopes": ["repo"]},
            **{login: {"user": login, "scopes": ["repo"]} for login in people},
        },
        "repos": [
            {"name": CONTROL, "collaborators": {BOT: "write"}, "labels": ["workflow"]},
            {
                "name": REPO,
                "collaborators": thread_people | ({BOT: "write"} if bot_pushes else {}),
                "issues": [{"number": 1, "author": "erin", "title": "Typo", "body": "Widgest"}],
            },
            {"name": TOOLS, "collaborators": {BOT: "write", "bob": "read"}},
        ],
    }


def operation(seq: int, repo: str, number: int | None) -> StagedOperation:
    if number is None:
        args: dict[str, Any] = {"repo": repo, "title": "Follow-up", "body": "b"}
        return StagedOperation(
            seq=seq,
            tool="create_issue",
            args=args,
            target=repo,
            summary=f"issue in {repo}",
            request={"method": "POST", "path": f"/repos/{repo}/issues", "json": args},
            nonce=f"n{seq}",
        )
    args = {"repo": repo, "number": number, "body": "Fixed."}
    return StagedOperation(
        seq=seq,
        tool="create_comment",
        args=args,
        target=f"{repo}#{number}",
        summary=f"comment on {repo}#{number}",
        request={
            "method": "POST",
            "path": f"/repos/{repo}/issues/{number}/comments",
            "json": {"body": "Fixed."},
        },
        nonce=f"n{seq}",
    )


def stage(gh: Any, *, elsewhere: bool) -> str:
    """A run of erin's, staged: its log issue, its set on it, its preview on the thread."""
    bot = gh.gateway("agent")
    marker = render_marker("job", {"jobid": "job-erin", "repo": REPO, "requester": "erin"})
    log = bot.post(
        f"/repos/{CONTROL}/issues",
        json={"title": f"[Agent Log] {REPO} #1", "body": marker, "labels": ["workflow"]},
    ).body
    operations = [operation(0, REPO, 1), *([operation(1, TOOLS, None)] if elsewhere else [])]
    staged = StagedSet(
        jobid="job-erin",
        repo=REPO,
        trigger_url=f"{gh.url}/{REPO}/issues/1",
        thread_number=1,
        control_repo=CONTROL,
        log_issue_number=log["number"],
        log_issue_url=log["html_url"],
        created_at=NOW,
        expires_at=NOW + timedelta(days=7),
        nonce_salt="salt",
        reason="approval: required",
        permissions=PermissionConfig(),
        operations=tuple(operations),
    )
    for body in set_comments(staged):
        bot.post(f"/repos/{CONTROL}/issues/{log['number']}/comments", json={"body": body})
    bot.post(f"/repos/{REPO}/issues/1/comments", json={"body": preview_body(staged, bot=BOT)})
    return set_digest(staged)


def say(gh: Any, who: str, body: str) -> ApprovalRequest:
    made = gh.gateway(who).post(f"/repos/{REPO}/issues/1/comments", json={"body": body}).body
    return ApprovalRequest(
        jobid=f"job-approval-{made['id']}",
        verb="discard" if "discard" in body else "apply",
        digest=body.split()[-1] if "sha256:" in body else None,
        actor=who,
        repo=REPO,
        number=1,
        comment_id=str(made["id"]),
        comment_url=made["html_url"],
        timestamp=NOW,
    )


def act(gh: Any, request: ApprovalRequest, tmp: Path) -> str:
    settings = Settings(
        bot=BOT,
        control_repo=CONTROL,
        allowed_users=APPROVERS,
        agent={"write_repos": [TOOLS]},  # type: ignore[arg-type]
    )
    return handle(
        request,
        settings,
        gh.gateway("agent"),
        run_dir=tmp / request.jobid,
        config_path=tmp / "tusk.yml",
        now=NOW,
    )


def replies(gh: Any) -> list[str]:
    comments = gh.gateway("erin").paginate(f"/repos/{REPO}/issues/1/comments")
    return [c["body"] for c in comments if first_marker(c["body"], "verdict")]


def made_nothing(gh: Any) -> bool:
    comments = gh.gateway("erin").paginate(f"/repos/{REPO}/issues/1/comments")
    fixed = [c for c in comments if c["body"].startswith("Fixed.")]
    issues = gh.gateway("bob").paginate(f"/repos/{TOOLS}/issues", params={"state": "all"})
    return not fixed and not list(issues)


@pytest.mark.parametrize(("who", "association"), [("carol", "COLLABORATOR"), ("dave", "MEMBER")])
@pytest.mark.parametrize("verb", ["apply", "discard"])
def test_a_read_invitee_or_an_org_member_is_refused_where_the_bot_cannot_push(
    local_github: Any, tmp_path: Path, who: str, association: str, verb: str
) -> None:
    local_github.load(world(bot_pushes=False))
    digest = stage(local_github, elsewhere=False)
    said = f"@{BOT} apply {digest}" if verb == "apply" else f"@{BOT} discard"
    request = say(local_github, who, said)
    shown = local_github.gateway(who).get(f"/repos/{REPO}/issues/comments/{request.comment_id}")
    assert shown["author_association"] == association  # what the old check trusted
    outcome = act(local_github, request, tmp_path)
    assert outcome.startswith(f"refused: {who}")
    [reply] = replies(local_github)
    assert "only to accounts with push access, and the bot has none there" in reply
    assert "Who can:" in reply
    if verb == "discard":
        assert "the run's requester, erin" in reply
    assert made_nothing(local_github)
    assert "Discarded" not in reply


def test_the_requester_may_discard_their_own_set_where_the_bot_cannot_push(
    local_github: Any, tmp_path: Path
) -> None:
    local_github.load(world(bot_pushes=False))
    digest = stage(local_github, elsewhere=False)
    outcome = act(local_github, say(local_github, "erin", f"@{BOT} discard"), tmp_path)
    assert outcome == f"discarded: {digest}"


def test_an_approver_without_write_on_a_second_target_cannot_apply(
    local_github: Any, tmp_path: Path
) -> None:
    """bob writes to the thread's repository, but the set also opens an issue in
    alice/tools (agent.write_repos), where GitHub shows him as a reader."""
    local_github.load(world(bot_pushes=True))
    digest = stage(local_github, elsewhere=True)
    settings_approvers = (*APPROVERS, "bob")
    request = say(local_github, "bob", f"@{BOT} apply {digest}")
    settings = Settings(
        bot=BOT,
        control_repo=CONTROL,
        allowed_users=settings_approvers,
        agent={"write_repos": [TOOLS]},  # type: ignore[arg-type]
    )
    outcome = handle(
        request,
        settings,
        local_github.gateway("agent"),
        run_dir=tmp_path / "run",
        config_path=tmp_path / "tusk.yml",
        now=NOW,
    )
    assert outcome.startswith("refused: bob has no write access GitHub confirms: role read on")
    assert TOOLS in outcome
    [reply] = replies(local_github)
    assert f"role read on {TOOLS}" in reply
    assert made_nothing(local_github)
