"""``add_label``: one label on an issue or pull request the run opened, gated by its
spec like every write and taken back by undo."""

from __future__ import annotations

from typing import Any

import pytest

from tests.mcp.gate.test_policy import config, refusal_code
from tests.mcp.mcp_harness import BOT, agent_session, scenario
from tests.mcp.server.test_server import records
from tusk.audit.chain import CreatedItem
from tusk.contracts.models import PermissionConfig
from tusk.mcp.gate import policy
from tusk.mcp.gate.policy import RunState
from tusk.steps.undo.plan import Removal, removal_of
from tusk.steps.undo.take_back import take_back

LABEL = {"repo": "alice/widgets", "number": 7, "label": "needs-review"}


def test_only_an_issue_or_pull_request_the_run_opened_may_be_labelled() -> None:
    cfg, state = config(), RunState()
    assert refusal_code("add_label", LABEL, cfg, state) == "FORBIDDEN_OPERATION"
    issue = {"repo": "alice/widgets", "title": "t", "body": "b"}
    policy.record_write("create_issue", issue, cfg, state, number=7)
    assert refusal_code("add_label", LABEL, cfg, state) is None
    assert refusal_code("add_label", {**LABEL, "repo": "alice/other"}, cfg, state) == (
        "FORBIDDEN_OPERATION"
    )


def test_a_label_is_limited_like_every_write() -> None:
    cfg, state = config(writes_per_run=2), RunState(own_threads={("alice/widgets", 7)})
    policy.record_write("add_label", LABEL, cfg, state)
    assert refusal_code("add_label", LABEL, cfg, state) == "DUPLICATE_WRITE"
    assert state.writes == 1
    policy.record_write("add_label", {**LABEL, "label": "bug"}, cfg, state)
    assert refusal_code("add_label", {**LABEL, "label": "x"}, cfg, state) == "LIMIT_EXCEEDED"
    reply_only = config(permissions=PermissionConfig(operations=("comment",)))
    own = RunState(own_threads={("alice/widgets", 7)})
    assert refusal_code("add_label", LABEL, reply_only, own) == "PERMISSION_DENIED"


def test_undo_reads_a_label_back_from_its_audit_url() -> None:
    url = "https://github.com/alice/widgets/issues/7#label=needs%20review"
    item = CreatedItem("label", url, "add_label", "alice/widgets#7")
    assert removal_of(item) == Removal("label", "alice/widgets", "7/needs review", url)
    bare = CreatedItem("label", "https://github.com/alice/widgets/issues/7", "add_label", "")
    assert removal_of(bare) is None


@pytest.mark.anyio
async def test_the_run_labels_its_own_issue_and_undo_takes_the_label_back(
    start_mcp: Any, local_github: Any
) -> None:
    # GitHub lets only people with triage access or more label: the bot works there.
    world = scenario()
    widgets = next(repo for repo in world["repos"] if repo["name"] == "alice/widgets")
    widgets["collaborators"] = {BOT: "write"}
    local_github.load(world)
    running = start_mcp()
    async with agent_session(running.url) as agent:
        await agent.refused(
            "add_label", "FORBIDDEN_OPERATION", repo="alice/widgets", number=1, label="bug"
        )
        await agent.ok("create_issue", repo="alice/widgets", title="Follow-up", body="Details")
        [opened] = [r for r in records(running) if r.created == "issue"]
        number = int(str(opened.url).rsplit("/", 1)[1])
        await agent.ok("add_label", repo="alice/widgets", number=number, label="needs review")
    owner = local_github.gateway("alice")
    labels = [x["name"] for x in owner.get(f"/repos/alice/widgets/issues/{number}")["labels"]]
    assert labels == ["needs review"]
    [labelled] = [r for r in records(running) if r.created == "label"]
    removal = removal_of(CreatedItem("label", str(labelled.url), "add_label", labelled.target))
    assert removal is not None
    assert take_back(owner, removal, bot=BOT, jobid="job-widgets-1") == ("done", "")
    assert owner.get(f"/repos/alice/widgets/issues/{number}")["labels"] == []
