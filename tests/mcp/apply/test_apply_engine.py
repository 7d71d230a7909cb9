"""The apply engine against the local GitHub: an approved set's writes made once, under
the run's policy, from what the run kept (the branch from its bundle)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from tests.mcp.mcp_harness import AGENT_TOKEN, BOT, READ_TOKEN, agent_session, settings
from tests.mcp.server.test_approval_mode import writes_sent
from tests.mcp.server.test_server import comments, fork_branches, make_workspace
from tusk.approval.staged_set import StagedSet
from tusk.approval.staging import load_kept
from tusk.audit import chain as audit
from tusk.contracts.models import BlockedRepo, RunMetadata
from tusk.issues.state import StateStore
from tusk.mcp.apply import engine as apply
from tusk.mcp.server import wiring as server

pytestmark = pytest.mark.anyio

RUN = RunMetadata(
    jobid="job-widgets-1",
    repo="alice/widgets",
    trigger_url="https://github.com/alice/widgets/issues/1#issuecomment-1001",
    trigger_type="issue_comment",
    thread_number=1,
    log_issue_number=77,
    log_issue_url="https://github.com/alice/tusk-control/issues/77",
    control_repo="alice/tusk-control",
    task_path="task.md",
    context_path="context.md",
    context_file="context.json",
)


async def stage(start_mcp: Any, local_github: Any, tmp_path: Path) -> tuple[StagedSet, Path]:
    work = make_workspace(local_github, tmp_path)
    running = start_mcp(workspace=work, agent={"approval": "required"})
    async with agent_session(running.url) as agent:
        await agent.ok("create_comment", repo="alice/widgets", number=1, body="Fixed, see PR.")
        await agent.ok("push_branch", branch="tusk/fix")
        await agent.ok(
            "create_pull_request",
            repo="alice/widgets",
            title="Fix typo",
            body="Fixes #1",
            head=f"{BOT}:tusk/fix",
            base="main",
        )
    staged = load_kept(running.run_dir, RUN, now=datetime(2026, 1, 1, tzinfo=UTC))
    assert staged is not None
    return staged, running.run_dir


def applier(local_github: Any, staged: StagedSet, run_dir: Path, **overrides: Any) -> Any:
    cfg = settings(**overrides)
    read_gw = local_github.gateway(READ_TOKEN)
    return apply.build_applier(
        cfg,
        staged,
        read_gateway=read_gw,
        write_gateway=local_github.gateway(AGENT_TOKEN),
        run_dir=run_dir,
        read_token=SecretStr(READ_TOKEN),
        write_token=SecretStr(AGENT_TOKEN),
        watch=server.blocklist_watch(cfg, read_gw),
    )


def pulls(local_github: Any) -> list[dict[str, Any]]:
    listed = local_github.gateway("alice").get("/repos/alice/widgets/pulls")
    return [pull for pull in listed if pull["user"]["login"] == BOT]


async def test_an_approved_set_is_applied_once_even_when_delivered_twice(
    start_mcp, local_github, tmp_path: Path
) -> None:
    staged, run_dir = await stage(start_mcp, local_github, tmp_path)
    before = len(comments(local_github))
    report = await applier(local_github, staged, run_dir).apply_all()
    assert report.ok, report
    assert [s.tool for s in report.steps] == [
        "create_comment",
        "push_branch",
        "create_pull_request",
    ]
    posted = comments(local_github)
    assert (
        len(posted) == before + 1
        and posted[-1]["body"] == staged.operations[0].request["json"]["body"]
    )
    assert "tusk/fix" in fork_branches(local_github) and len(pulls(local_github)) == 1
    # The run's chain goes on: staged records first, then the applied writes.
    decisions = [r.decision for r in audit.read_records(run_dir / "audit.jsonl")]
    assert decisions == ["staged"] * 3 + ["allowed"] * 3
    # A second delivery finds every create by its nonce: nothing doubles.
    since = len(local_github.journal())
    again = await applier(local_github, staged, run_dir).apply_all()
    assert again.ok, again
    assert len(comments(local_github)) == before + 1 and len(pulls(local_github)) == 1
    assert not [w for w in writes_sent(local_github, since) if w["path"].endswith("/comments")]


async def test_a_create_whose_answer_was_lost_is_found_not_repeated(
    start_mcp, local_github, tmp_path: Path
) -> None:
    staged, run_dir = await stage(start_mcp, local_github, tmp_path)
    before = len(comments(local_github))
    local_github.add_fault("POST", r"/issues/1/comments$", status=502, lands=True)
    report = await applier(local_github, staged, run_dir).apply_all()
    assert report.ok, report
    assert len(comments(local_github)) == before + 1


async def test_a_go_away_since_the_run_blocks_every_write(
    start_mcp, local_github, tmp_path: Path
) -> None:
    staged, run_dir = await stage(start_mcp, local_github, tmp_path)
    cfg = settings()
    StateStore(local_github.gateway(AGENT_TOKEN), cfg).update_blocklist(
        lambda b: b.model_copy(
            update={"repos": (BlockedRepo(repo="alice/widgets", by="alice", at=datetime.now(UTC)),)}
        )
    )
    before = comments(local_github)
    since = len(local_github.journal())
    report = await applier(local_github, staged, run_dir).apply_all()
    assert not report.ok and len(report.steps) == 1
    assert report.steps[0].said.startswith("BLOCKED_TARGET")
    assert comments(local_github) == before and pulls(local_github) == []
    assert [w for w in writes_sent(local_github, since) if "tusk-control" not in w["path"]] == []


async def test_a_policy_that_changed_since_the_run_applies_nothing(
    start_mcp, local_github, tmp_path: Path
) -> None:
    staged, run_dir = await stage(start_mcp, local_github, tmp_path)
    before = comments(local_github)
    # The installation now allows no comments at all: the same checks, run again, refuse.
    report = await applier(
        local_github, staged, run_dir, limits={"comments_per_thread": 0}
    ).apply_all()
    assert not report.ok and report.steps[0].said.startswith("LIMIT_EXCEEDED")
    assert comments(local_github) == before


async def test_the_branch_is_pushed_from_its_bundle_after_upstream_moved_on(
    start_mcp, local_github, tmp_path: Path
) -> None:
    from tests.mcp.server.test_server import git

    staged, run_dir = await stage(start_mcp, local_github, tmp_path)
    # Someone pushes to upstream's main between the run and the approval.
    clone_url = local_github.gateway("alice").get("/repos/alice/widgets")["clone_url"]
    other = tmp_path / "maintainer"
    git(["clone", "--quiet", clone_url, str(other)], tmp_path, token="alice")
    (other / "CHANGES.md").write_text("later\n")
    git(["add", "-A"], other)
    git(["-c", "user.name=a", "-c", "user.email=a@example.test", "commit", "-qm", "later"], other)
    git(["push", "--quiet", "origin", "HEAD:main"], other, token="alice")
    report = await applier(local_github, staged, run_dir).apply_all()
    assert report.ok, report
    listed = local_github.gateway("alice").get(f"/repos/{BOT}/widgets/branches")
    assert {b["name"]: b["commit"]["sha"] for b in listed}["tusk/fix"] == staged.operations[
        1
    ].request["sha"]


def test_an_approved_set_may_write_only_where_the_run_could() -> None:
    """Write scope judged again at apply: the trigger repository, the bot's fork of it and
    agent.write_repos; a repository the run only named is not trusted from the kept set."""
    staged = StagedSet.model_construct(repo="alice/widgets")
    cfg = settings(agent={"write_repos": ["Alice/Docs"]})
    assert apply.apply_write_repos(cfg, staged) == frozenset(
        {"alice/widgets", f"{BOT}/widgets".lower(), "alice/docs"}
    )


async def test_a_staged_write_outside_the_write_scope_is_refused_at_apply(
    start_mcp, local_github, tmp_path: Path
) -> None:
    staged, run_dir = await stage(start_mcp, local_github, tmp_path)
    first = staged.operations[0]
    moved = first.model_copy(update={"args": {**first.args, "repo": "mallory/elsewhere"}})
    elsewhere = staged.model_copy(update={"operations": (moved, *staged.operations[1:])})
    since = len(local_github.journal())
    report = await applier(local_github, elsewhere, run_dir).apply_all()
    assert not report.ok and report.steps[0].said.startswith("OUT_OF_SCOPE"), report
    assert [w for w in writes_sent(local_github, since) if "tusk-control" not in w["path"]] == []
