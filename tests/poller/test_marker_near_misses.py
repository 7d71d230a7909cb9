"""A string that looks like a permission marker but is not exactly one fails closed."""

from __future__ import annotations

from typing import Any

import pytest
from poller_helpers import SETTINGS, issue, said, scenario

from tusk.contracts.models import PermissionConfig
from tusk.issues.run_facts import run_facts
from tusk.poller.core import PollState
from tusk.poller.permissions import edit_distance, effective_permissions
from tusk.steps.build_context import build_context as bc
from tusk.steps.build_context import log_body as lb

NEAR_MISSES = {
    "@tusk-bot [permisions: no-pr] fix the typo": "'permisions' is not 'permissions'",
    "@tusk-bot [premissions: no-pr] fix the typo": "'premissions' is not 'permissions'",
    "@tusk-bot [perms: no-pr] fix the typo": "'perms' is not 'permissions'",
    "@tusk-bot (permissions: no-pr) fix the typo": "square brackets",
    "@tusk-bot {permissions: no-pr} fix the typo": "square brackets",
    "@tusk-bot [permissions no-pr] fix the typo": "no ':' after 'permissions'",
    "@tusk-bot permissions: no-pr, fix the typo": "it has no brackets",
    "@tusk-bot (perm no-pr) fix the typo": "'perm' is not 'permissions'",
}


@pytest.mark.parametrize("body", sorted(NEAR_MISSES))
def test_a_near_miss_runs_with_the_most_restrictive_permissions_and_says_why(body: str) -> None:
    result = effective_permissions(PermissionConfig(), body)
    assert result.error is not None and NEAR_MISSES[body] in result.error
    assert "looks like a permission marker but is not one" in result.error
    assert result.operations == ("comment",) and result.only_this_thread
    assert (result.comments_per_thread, result.prs_per_repo, result.issues_per_repo) == (1, 0, 0)
    assert result.marker is not None and result.marker in body  # what was typed, for the log


@pytest.mark.parametrize(
    "body",
    [
        "@tusk-bot fix the docs (permissions page is broken)",
        "@tusk-bot we lack permissions: could you check?",
        "@tusk-bot [permission denied] shows up in the log",
        "@tusk-bot the superpermissions: no-pr module",
        "@tusk-bot check `(permissions: no-pr)` in the docs",
        "@tusk-bot (performance: slow) please look",
    ],
)
def test_prose_that_merely_talks_about_permissions_keeps_the_defaults(body: str) -> None:
    assert effective_permissions(PermissionConfig(), body) == PermissionConfig()


def test_the_exact_marker_is_still_a_marker() -> None:
    result = effective_permissions(PermissionConfig(), "@tusk-bot [Permissions: no-pr] go")
    assert result.error is None and not result.allows("pull_request")


def test_edit_distance_counts_a_swap_of_neighbours_as_one() -> None:
    assert edit_distance("permissions", "permissions") == 0
    assert edit_distance("permisions", "permissions") == 1
    assert edit_distance("premissions", "permissions") == 1
    assert edit_distance("", "abc") == 3 and edit_distance("kitten", "sitting") == 3


def test_a_misspelt_marker_reaches_the_log_issue_and_the_agents_task(harness: Any) -> None:
    body = "@tusk-bot [permisions: no-pr] fix the typo"
    h = harness(scenario(issues=[issue(1, [said("alice", body)])]))
    h.poller.cycle(PollState())
    (doc,) = h.sent().tasks
    config = doc.permission_config
    assert config.error is not None and "'permisions' is not 'permissions'" in config.error
    assert config.operations == ("comment",) and config.prs_per_repo == 0
    built = bc.build(doc, SETTINGS)
    assert "'permisions' is not 'permissions'" in bc.render_task(built.task)
    log = lb.log_issue_body(
        jobid=doc.jobid,
        repo=doc.repo,
        task_text=built.task.text,
        context_text=bc.render_context(built.context),
        artifact_name="tusk-context-x",
        artifact_url=None,
        facts=run_facts(doc, SETTINGS),
    )
    facts = log.body.split("# Context")[0]
    assert "the permission marker could not be read" in facts
    assert "'permisions' is not 'permissions'" in facts
