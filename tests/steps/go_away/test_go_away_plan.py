"""Pure go-away decisions: scope (G1), blocklist changes (G2), what cleanup may touch (G3)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from tusk.contracts.models import BlockedRepo, BlockedUser, Blocklist, GoAwayRequest
from tusk.issues.log_issue import LogIssue
from tusk.steps.go_away import plan
from tusk.steps.go_away.plan import (
    Scope,
    affected_repos,
    apply_scope,
    decide_scope,
    log_issues_to_close,
    own_items,
    pulls_from_fork,
    reaction_path,
    skip_reason,
)
from tusk.text.render import render

AT = datetime(2026, 11, 30, 6, 0, tzinfo=UTC)
URL = "https://github.com/alice/widgets/issues/1#issuecomment-5"


def request(**overrides: Any) -> GoAwayRequest:
    fields: dict[str, Any] = {
        "jobid": "alice-widgets-ic-0123456789",
        "actor": "bob",
        "repo": "alice/widgets",
        "trust_level": "collaborator",
        "comment_id": "5",
        "comment_url": URL,
        "timestamp": AT,
    }
    return GoAwayRequest(**{**fields, **overrides})


def test_collaborator_blocks_the_repository_and_their_own_repositories() -> None:
    scope = decide_scope(request(), {"permission": "write", "role_name": "write"})
    assert (scope.block_repo, scope.user, scope.permission) == (True, "bob", "write")


def test_non_collaborator_blocks_only_their_own_repositories() -> None:
    scope = decide_scope(request(), {"permission": "read", "role_name": "read"})
    assert (scope.block_repo, scope.user) == (False, "bob")


def test_unreadable_permission_and_no_association_fail_narrow_to_the_user_block() -> None:
    scope = decide_scope(request(), None)
    assert (scope.block_repo, scope.permission, scope.trust_source) == (False, "unknown", "none")


@pytest.mark.parametrize(
    ("association", "blocks_repo"),
    [("OWNER", True), ("MEMBER", True), ("COLLABORATOR", True), ("CONTRIBUTOR", False)],
)
def test_unreadable_permission_falls_back_on_the_comments_author_association(
    association: str, blocks_repo: bool
) -> None:
    scope = decide_scope(request(), None, association)
    assert (scope.block_repo, scope.permission, scope.trust_source) == (
        blocks_repo,
        association,
        "author_association",
    )


def test_a_readable_permission_wins_over_the_association() -> None:
    scope = decide_scope(request(), {"permission": "read", "role_name": "read"}, "MEMBER")
    assert (scope.block_repo, scope.trust_source) == (False, "permission_endpoint")


def test_scope_adds_repo_and_user_entries_with_their_source() -> None:
    scope = decide_scope(request(), {"role_name": "admin"})
    after = apply_scope(Blocklist(), scope, at=AT, source_url=URL)
    assert after.repos == (BlockedRepo(repo="alice/widgets", by="bob", at=AT, source_url=URL),)
    assert after.users == (BlockedUser(user="bob", at=AT, source_url=URL),)
    assert after.blocks("alice/widgets") and after.blocks("bob/anything")
    assert not after.blocks("alice/other")


def test_repeating_a_go_away_changes_nothing() -> None:
    scope = decide_scope(request(), {"role_name": "admin"})
    once = apply_scope(Blocklist(), scope, at=AT, source_url=URL)
    later = datetime(2026, 12, 1, tzinfo=UTC)
    assert apply_scope(once, scope, at=later, source_url="other") is once


def test_existing_entries_match_case_insensitively() -> None:
    blocklist = Blocklist(
        repos=(BlockedRepo(repo="Alice/Widgets", by="x", at=AT),),
        users=(BlockedUser(user="BOB", at=AT),),
    )
    scope = decide_scope(request(), {"role_name": "write"})
    assert apply_scope(blocklist, scope, at=AT, source_url=URL) is blocklist


def test_other_entries_survive_an_update() -> None:
    blocklist = Blocklist(users=(BlockedUser(user="carol", at=AT),))
    after = apply_scope(blocklist, decide_scope(request(), None), at=AT, source_url=URL)
    assert [u.user for u in after.users] == ["carol", "bob"]


def test_affected_repositories_are_the_blocked_one_and_all_the_actor_owns() -> None:
    scope = Scope(actor="bob", repo="alice/widgets", permission="write", block_repo=True)
    owned = ["bob/tools", "Bob/site", "carol/not-bobs"]
    assert affected_repos(scope, owned) == ["alice/widgets", "Bob/site", "bob/tools"]


def test_non_collaborator_does_not_make_the_repository_affected() -> None:
    scope = Scope(actor="bob", repo="alice/widgets", permission="read", block_repo=False)
    assert affected_repos(scope, ["bob/tools"]) == ["bob/tools"]


@pytest.mark.parametrize(
    ("repo", "skipped"),
    [
        ("ops/tusk-control", True),
        ("OPS/Tusk-Control", True),
        ("tusk-bot/widgets", True),
        ("alice/widgets", False),
    ],
)
def test_cleanup_never_touches_the_control_repository_or_the_bots_own(
    repo: str, skipped: bool
) -> None:
    reason = skip_reason(repo, bot="tusk-bot", control_repo="ops/tusk-control")
    assert (reason is not None) is skipped


def test_own_items_keeps_only_the_bots_items_whatever_the_case() -> None:
    items = [
        {"id": 1, "user": {"login": "tusk-bot"}},
        {"id": 2, "user": {"login": "alice"}},
        {"id": 3, "user": {"login": "Tusk-Bot"}},
        {"id": 4, "user": None},  # a deleted account ("ghost")
        {"id": 5, "user": {"login": "tusk-bot-imposter"}},
    ]
    assert [i["id"] for i in own_items(items, "tusk-bot")] == [1, 3]


def test_only_open_pulls_from_the_fork_close_with_it() -> None:
    def pull(number: int, state: str, head: str | None) -> dict[str, Any]:
        return {"number": number, "state": state, "head": {"repo": head and {"full_name": head}}}

    pulls = [
        pull(1, "open", "tusk-bot/widgets"),
        pull(2, "closed", "tusk-bot/widgets"),
        pull(3, "open", "alice/widgets"),
        pull(4, "open", None),  # head repository already gone
    ]
    assert [p["number"] for p in pulls_from_fork(pulls, "tusk-bot/widgets")] == [1]


def log_issue(number: int, repo: str | None, state: str = "open") -> LogIssue:
    return LogIssue(
        number=number,
        url=f"https://github.com/ops/tusk-control/issues/{number}",
        title=f"[Agent Log] {repo} #1 — 2026-11-30 06:00",
        state=state,
        state_reason=None,
        jobid=f"job-{number}",
        repo=repo,
        failure=False,
        created_at=AT,
    )


def test_log_issues_of_affected_repositories_close_except_this_runs_own() -> None:
    issues = [
        log_issue(1, "alice/widgets"),
        log_issue(2, "Bob/Tools"),
        log_issue(3, "carol/other"),
        log_issue(4, "alice/widgets", state="closed"),
        log_issue(5, "alice/widgets"),  # this go-away's own log issue
        log_issue(6, None),
    ]
    chosen = log_issues_to_close(issues, ["alice/widgets", "bob/tools"], keep=5)
    assert [i.number for i in chosen] == [1, 2]


@pytest.mark.parametrize(
    ("kind", "url", "path"),
    [
        ("issue_comment", URL, "/repos/alice/widgets/issues/comments/5/reactions"),
        ("review_comment", URL, "/repos/alice/widgets/pulls/comments/5/reactions"),
        (
            "issue_body",
            "https://github.com/alice/widgets/issues/7",
            "/repos/alice/widgets/issues/7/reactions",
        ),
        (
            "pull_request_body",
            "https://github.com/alice/widgets/pull/8",
            "/repos/alice/widgets/issues/8/reactions",
        ),
        ("review", "https://github.com/alice/widgets/pull/8#pullrequestreview-9", None),
        ("discussion_comment", "https://github.com/alice/widgets/discussions/3", None),
    ],
)
def test_reaction_goes_to_the_endpoint_of_the_go_away_node(
    kind: str, url: str, path: str | None
) -> None:
    assert reaction_path(request(comment_type=kind, comment_url=url)) == path


def test_log_title_names_the_repository_and_thread() -> None:
    assert plan.log_title(request()) == "[Agent Log] alice/widgets #1 go away — 2026-11-30 06:00"


def test_oversized_report_is_cut_to_what_github_accepts() -> None:
    body = "x" * 70000
    cut = plan.fit_body(body)
    assert len(cut) == 65536
    assert cut.endswith("the run's step summary has it all.)\n")
    assert plan.fit_body("short") == "short"


EXPECTED_LOG = """\
<!-- tusk:job {} -->
# Go away

`bob` asked `tusk-bot` to leave: `https://github.com/alice/widgets/issues/1#issuecomment-5` (2026-11-30 06:00 UTC).

## Blocked

- The repository `alice/widgets`: `bob` has the `write` role there (collaborator permission).
- Every repository owned by `bob`.

Added to the blocklist: repository `alice/widgets`, user `bob` (every repository they own).

Reacted with `+1` to the request.

## Removed

| Repository | Fork | Comments deleted | Review comments deleted | Discussion comments deleted | Pending reviews deleted |
|---|---|---|---|---|---|
| `alice/widgets` | `tusk-bot/widgets` deleted, closing 1 open pull request(s) | 2 | 1 | 1 | 0 |
| `bob/tools` | `tusk-bot/tools` **not deleted** | 0 | 0 | 0 | 0 |
| `ops/control` | not touched: the control repository | | | | |

### Reviews that cannot be deleted

GitHub does not delete submitted reviews. Hide or dismiss these by hand if needed:

- `https://github.com/alice/widgets/pull/2#pullrequestreview-701`

### Pull requests closed with the fork

Each was read back after the fork was deleted (GitHub does not promise to close them).

- `https://github.com/alice/widgets/pull/3`

### What GitHub keeps

- Each deleted comment leaves a "deleted a comment" event in its thread's timeline, visible to anyone with read access.
- Submitted reviews cannot be deleted: their bodies stay (listed above, if any).
- Closed pull requests and their descriptions stay, as do issue and pull request bodies, which cannot be deleted; the fork's commits may stay reachable from the pull requests.

### Log issues closed as not planned

- https://github.com/ops/control/issues/1

## Problems

- **could not delete the bot's fork tusk-bot/tools** (`bob/tools`): DELETE /repos/tusk-bot/tools: 403
  To do: Give the agent token the delete_repo scope.
"""  # noqa: E501 - markdown lines are as long as the report makes them


def test_log_issue_renders_the_whole_report() -> None:
    report = plan.GoAwayReport(
        request=request(),
        bot="tusk-bot",
        scope=Scope(
            actor="bob",
            repo="alice/widgets",
            permission="write",
            block_repo=True,
            trust_level="collaborator",
            trust_source="permission_endpoint",
        ),
        blocklist_updated=True,
        newly_blocked_repos=["alice/widgets"],
        newly_blocked_users=["bob"],
        repos=[
            plan.RepoCleanup(
                repo="alice/widgets",
                fork="tusk-bot/widgets",
                fork_deleted=True,
                closed_pulls=["https://github.com/alice/widgets/pull/3"],
                comments_deleted=["c1", "c2"],
                review_comments_deleted=["r1"],
                discussion_comments_deleted=["d1"],
                reviews_kept=["https://github.com/alice/widgets/pull/2#pullrequestreview-701"],
            ),
            plan.RepoCleanup(repo="bob/tools", fork="tusk-bot/tools"),
            plan.RepoCleanup(repo="ops/control", skipped="the control repository"),
        ],
        log_issues_closed=["https://github.com/ops/control/issues/1"],
        failures=[
            plan.Failure(
                what="could not delete the bot's fork tusk-bot/tools",
                repo="bob/tools",
                error="DELETE /repos/tusk-bot/tools: 403",
                todo="Give the agent token the delete_repo scope.",
            )
        ],
        reaction="+1",
    )
    rendered = render(
        "go_away_log.md.j2", marker="<!-- tusk:job {} -->", report=report, finished=True
    )
    assert rendered == EXPECTED_LOG


def test_log_issue_while_working_says_so_and_keeps_the_marker_first() -> None:
    report = plan.GoAwayReport(request=request(), bot="tusk-bot")
    rendered = render("go_away_log.md.j2", marker="<!-- m -->", report=report, finished=False)
    assert rendered.startswith("<!-- m -->\n# Go away\n")
    assert "Working on it" in rendered and "## Problems" not in rendered
