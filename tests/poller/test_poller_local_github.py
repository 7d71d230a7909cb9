"""The poller against the local GitHub: notification → trigger → authorization → dispatch."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from poller_helpers import BOT, REPO, SETTINGS, issue, make_poller, said, scenario, settle, wire

from tusk.contracts.models import BlockedRepo, BlockedUser
from tusk.issues.state import StateStore
from tusk.poller.core import PollState
from tusk.poller.jobids import job_id

REAL = "@tusk-bot please fix the typo"

P2_RULES = {
    "code-block": "```\n@tusk-bot fix this\n```",
    "inline-code": "type `@tusk-bot fix` to ask",
    "quote": "> @tusk-bot fix this\n\nAgreed.",
    "e-mail": "write to ops@tusk-bot.dev",
    "longer-login": "@tusk-bot-helper can you fix it?",
}


@pytest.mark.parametrize("rule", sorted(P2_RULES))
def test_p2_rule_non_mention_is_not_dispatched(harness: Any, rule: str) -> None:
    """The thread is notified by one real mention; the rule's comment must add no job."""
    h = harness(scenario(issues=[issue(1, [said("alice", REAL), said("alice", P2_RULES[rule])])]))
    _, report = h.poller.cycle(PollState())
    sent = h.sent()
    assert len(sent.tasks) == 1, report.lines()
    assert sent.tasks[0].trigger.body == REAL


def test_p2_rule_bot_own_text_is_not_dispatched(harness: Any) -> None:
    h = harness(
        scenario(
            issues=[issue(1, [said("alice", REAL), said(BOT, "On it, @tusk-bot here. @alice")])]
        )
    )
    h.poller.cycle(PollState())
    assert [doc.trigger.body for doc in h.sent().tasks] == [REAL]


def test_p2_rule_bot_account_is_not_dispatched_unless_configured(harness: Any) -> None:
    comments = [said("renovate[bot]", "@tusk-bot rebase this"), said("alice", REAL)]
    h = harness(
        scenario(issues=[issue(1, comments)]),
        SETTINGS.model_copy(update={"allowed_users": ("alice", "renovate[bot]")}),
    )
    h.poller.cycle(PollState())
    assert [doc.actor for doc in h.sent().tasks] == ["alice"]


def test_p2_rule_bot_account_is_dispatched_when_configured(harness: Any) -> None:
    settings = SETTINGS.model_copy(
        update={"allowed_users": ("renovate[bot]",), "allow_bot_accounts": True}
    )
    h = harness(
        scenario(issues=[issue(1, [said("renovate[bot]", "@tusk-bot rebase this")])]), settings
    )
    h.poller.cycle(PollState())
    assert [doc.actor for doc in h.sent().tasks] == ["renovate[bot]"]


def test_unauthorized_author_is_skipped_and_the_thread_marked_read(harness: Any) -> None:
    h = harness(scenario(issues=[issue(1, [said("mallory", "@tusk-bot delete everything")])]))
    _, report = h.poller.cycle(PollState())
    assert h.github.dispatches() == []
    assert any("not in allowed_users" in line for line in report.skipped)
    assert [t["unread"] for t in h.threads()] == [False]
    # The stranger's mention cost no permission request.
    assert not any("collaborators" in route for route in h.ledger.by_route)


def test_go_away_dispatches_the_go_away_workflow_not_a_task(harness: Any) -> None:
    h = harness(
        scenario(
            issues=[
                issue(1, [said("mallory", "@tusk-bot go away"), said("bob", "@tusk-bot Go away!")])
            ]
        )
    )
    h.poller.cycle(PollState())
    sent = h.sent()
    assert sent.tasks == []
    requests = {r.actor: r for r in sent.go_aways}
    assert set(requests) == {"mallory", "bob"}
    assert requests["mallory"].trust_level == "external"
    assert requests["bob"].trust_level == "collaborator"
    assert requests["bob"].repo == REPO
    assert requests["bob"].comment_type == "issue_comment"
    assert requests["bob"].comment_url.endswith(f"#issuecomment-{requests['bob'].comment_id}")


def _block(local_github: Any, change: Any) -> None:
    StateStore(local_github.gateway("agent"), SETTINGS).update_blocklist(change)


def test_blocked_repository_is_not_dispatched(harness: Any, local_github: Any) -> None:
    h = harness(scenario(issues=[issue(1, [said("alice", REAL)])]))
    _block(
        local_github,
        lambda b: b.model_copy(
            update={"repos": (BlockedRepo(repo=REPO, by="bob", at="2026-01-01T00:00:00Z"),)}
        ),
    )
    _, report = h.poller.cycle(PollState())
    assert h.sent().tasks == []
    assert any("blocklist" in line for line in report.skipped)
    assert [t["unread"] for t in h.threads()] == [False]


def test_blocked_user_is_not_dispatched(harness: Any, local_github: Any) -> None:
    h = harness(scenario(issues=[issue(1, [said("bob", REAL)])]))
    _block(
        local_github,
        lambda b: b.model_copy(
            update={"users": (BlockedUser(user="bob", at="2026-01-01T00:00:00Z"),)}
        ),
    )
    h.poller.cycle(PollState())
    assert h.sent().tasks == []


def test_three_new_mentions_in_one_thread_are_one_run_and_its_two_follow_ups(
    harness: Any,
) -> None:
    comments = [
        said("alice", "@tusk-bot one"),
        said("bob", "@tusk-bot two"),
        said("alice", "@tusk-bot three"),
    ]
    h = harness(scenario(issues=[issue(1, comments)]))
    settled = settle(h)
    [run] = settled.tasks
    assert run.trigger.body == "@tusk-bot one" and run.trust_level == "owner"
    assert run.jobid == job_id(REPO, "issue_comment", run.trigger.id)
    assert [(f["text"], f["trust_level"]) for f in settled.followups] == [
        ("@tusk-bot two", "collaborator"),
        ("@tusk-bot three", "owner"),
    ]


class Crash(BaseException):
    """The process dies: nothing after this point runs."""


def test_crash_between_dispatch_and_mark_read_redispatches_the_same_job_ids(
    harness: Any, local_github: Any
) -> None:
    comments = [said("alice", "@tusk-bot one")]
    scn = scenario(issues=[issue(1, comments)])

    def crash(thread: Any) -> None:
        raise Crash

    h = harness(scn, after_dispatch=crash)
    with pytest.raises(Crash):
        h.poller.cycle(PollState())
    first = h.sent().order
    assert len(first) == 1
    assert [t["unread"] for t in h.threads()] == [True]

    again = make_poller(local_github)  # a fresh process: no state carried over
    again.poller.cycle(PollState())
    sent = again.sent()
    assert sent.order == first + first
    assert sent.jobids == first  # the repeat is byte-identical: the merge sees duplicates
    assert [t["unread"] for t in again.threads()] == [False]


def test_mention_posted_while_dispatching_keeps_the_thread_unread(
    harness: Any, local_github: Any
) -> None:
    alice = local_github.gateway("alice")
    posted: list[str] = []

    def meanwhile(thread: Any) -> None:
        if not posted:  # once: alice writes while the poller is between dispatch and mark-read
            body = "@tusk-bot and this too"
            alice.post(f"/repos/{REPO}/issues/1/comments", json={"body": body})
            posted.append(body)

    h = harness(
        scenario(issues=[issue(1, [said("alice", "@tusk-bot first")])]), after_dispatch=meanwhile
    )
    state, _ = h.poller.cycle(PollState())
    # Marked read only as listed: the new mention moved the thread past the cutoff.
    assert [t["unread"] for t in h.threads()] == [True]
    mark = [r for r in h.github.journal() if r["method"] == "PUT"]
    assert [r["path"] for r in mark] == ["/notifications"]
    h.poller.cycle(state)
    bodies = [doc.trigger.body for doc in h.sent().tasks]
    assert bodies == ["@tusk-bot first", "@tusk-bot and this too"]  # nothing lost, nothing twice
    assert [t["unread"] for t in h.threads()] == [False]


def test_a_thread_updated_in_the_second_before_the_answers_date_waits_for_the_next_poll(
    harness: Any, local_github: Any
) -> None:
    """GitHub's Date is stamped as the answer leaves, after the listing was built: an
    answer dated second S+1 may hold a listing built in second S, and a mention landing
    later in S would share the listed thread's updated_at and fall under a cutoff of S.
    So a thread updated in S is not marked read until a later poll lists it again."""
    h = harness(scenario(issues=[issue(1, [said("alice", "@tusk-bot first")])]))
    alice = local_github.gateway("alice")
    alice.post(f"/repos/{REPO}/issues/1/comments", json={"body": "@tusk-bot second"})
    # The local GitHub's Date is now one second after that comment: the poll's listing
    # may have been built in the comment's own second.
    state, report = h.poller.cycle(PollState())
    # One run per thread: the second waits for the first's claim (C1).
    assert len(report.dispatched) == 1 and report.left_unread
    assert [t["unread"] for t in h.threads()] == [True]
    local_github.advance(60)  # the next poll
    h.poller.cycle(state)
    assert [t["unread"] for t in h.threads()] == [False]
    bodies = sorted({doc.trigger.body for doc in h.sent().tasks})
    assert bodies == ["@tusk-bot first", "@tusk-bot second"]  # the repeat has the same job ids


def test_failed_dispatch_leaves_the_thread_unread_and_the_next_poll_retries(
    harness: Any, local_github: Any
) -> None:
    h = harness(scenario(issues=[issue(1, [said("alice", REAL)])]))
    local_github.add_fault("POST", r"/repos/alice/control/dispatches", status=422, count=1)
    state, report = h.poller.cycle(PollState())
    assert report.errors and report.left_unread
    assert [t["unread"] for t in h.threads()] == [True]
    h.poller.cycle(state)
    assert len(h.sent().tasks) == 1


def test_an_outage_during_dispatch_is_not_blamed_on_the_dispatch_token(
    harness: Any, local_github: Any
) -> None:
    h = harness(scenario(issues=[issue(1, [said("alice", REAL)])]))
    local_github.add_fault("POST", r"/repos/alice/control/dispatches", status=502, count=None)
    _, report = h.poller.cycle(PollState())
    (error,) = [e for e in report.errors if "repository_dispatch" in e]
    # (the sandbox's token string is its name, so the gateway scrubs the word "dispatch")
    assert "an outage on GitHub's side, not a problem with the" in error
    assert "token (TUSK_DISPATCH_TOKEN)" in error
    assert "the token is not at fault" in error and "may write to" not in error
    assert [t["unread"] for t in h.threads()] == [True]


def test_a_refused_dispatch_token_is_named_and_blamed(harness: Any, local_github: Any) -> None:
    h = harness(scenario(issues=[issue(1, [said("alice", REAL)])]))
    local_github.add_fault("POST", r"/repos/alice/control/dispatches", status=401, count=None)
    _, report = h.poller.cycle(PollState())
    (error,) = [e for e in report.errors if "repository_dispatch" in e]
    assert "token (TUSK_DISPATCH_TOKEN): it is wrong, expired or revoked" in error
    assert "Check that TUSK_DISPATCH_TOKEN may write" in error


def test_idle_poll_is_two_conditional_requests_answered_304(harness: Any) -> None:
    """The inbox, and the sweep for late follow-ups (nothing left pending): both 304."""
    h = harness(scenario(issues=[issue(1, [said("alice", REAL)])]))
    state, _ = h.poller.cycle(PollState())
    state, _ = h.poller.cycle(state)  # sees its own mark-read; nothing unread
    h.ledger.reset()
    state, report = h.poller.cycle(state)
    assert report.status == 304
    assert h.ledger.total == 0
    assert h.ledger.total_not_modified == 2
    assert state.poll_interval == 60.0


def test_issue_context_is_complete(harness: Any) -> None:
    h = harness(
        scenario(
            issues=[
                issue(
                    7,
                    [
                        said("bob", "first thoughts"),
                        said("alice", "@tusk-bot [permissions: no-pr] fix it"),
                    ],
                    labels=["bug"],
                    assignees=["bob"],
                    milestone="v1",
                )
            ]
        )
    )
    h.poller.cycle(PollState())
    (doc,) = h.sent().tasks
    raw = wire(doc)
    assert raw["kind"] == "issue"
    assert raw["thread"]["number"] == 7 and raw["thread"]["body"] == "Something is off."
    assert [label["name"] for label in raw["thread"]["labels"]] == ["bug"]
    assert [a["login"] for a in raw["thread"]["assignees"]] == ["bob"]
    assert raw["thread"]["milestone"]["title"] == "v1"
    assert raw["thread"]["state"] == "open" and raw["thread"]["user"]["login"] == "alice"
    assert [c["body"] for c in raw["comments"]] == [
        "first thoughts",
        "@tusk-bot [permissions: no-pr] fix it",
    ]
    assert raw["repository"]["default_branch"] == "main"
    assert [b["name"] for b in raw["repository"]["branches"]] == ["main"]
    assert "pull_request" not in doc.permission_config.operations
    assert doc.permission_config.marker == "[permissions: no-pr]"
    assert doc.trigger.type == "issue_comment" and doc.actor == "alice"


def test_mark_read_refused_leaves_the_thread_for_the_next_poll_with_the_same_job_id(
    harness: Any, local_github: Any
) -> None:
    h = harness(scenario(issues=[issue(1, [said("alice", REAL)])]))
    local_github.add_fault("PUT", r"^/notifications$", status=403, message="Forbidden")
    state, report = h.poller.cycle(PollState())
    assert any("marking the inbox read failed" in error for error in report.errors)
    assert report.left_unread and state.last_modified is None
    assert [t["unread"] for t in h.threads()] == [True]
    again = make_poller(local_github)
    _, report = again.poller.cycle(PollState())
    # The next poll reads the thread again, finds the bot's 👀 and sends nothing twice.
    assert len(again.sent().order) == 1
    assert any("dispatched before" in line for line in report.skipped)
    assert [t["unread"] for t in again.threads()] == [False]


def test_a_dispatch_answered_other_than_204_counts_as_failed(
    harness: Any, local_github: Any
) -> None:
    h = harness(scenario(issues=[issue(1, [said("alice", REAL)])]))
    local_github.add_fault("POST", r"/repos/alice/control/dispatches", status=200, count=1)
    _, report = h.poller.cycle(PollState())
    assert any("answered 200" in error for error in report.errors), report.errors
    assert [t["unread"] for t in h.threads()] == [True]


def test_a_large_context_travels_as_several_shards_that_join_whole(harness: Any) -> None:
    settings = SETTINGS.model_copy(
        update={"limits": SETTINGS.limits.model_copy(update={"shard_bytes": 1024})}
    )
    comments = [said("bob", f"comment {i} " + "lorem ipsum " * 30) for i in range(60)]
    h = harness(scenario(issues=[issue(1, [*comments, said("alice", REAL)])]), settings)
    h.poller.cycle(PollState())
    sent = h.sent()
    (doc,) = sent.tasks
    assert sent.shard_counts[doc.jobid] > 1
    assert len(wire(doc)["comments"]) == 61
    payloads = [d["client_payload"] for d in h.github.dispatches()]
    assert all(len(p) <= 10 for p in payloads)  # GitHub's client_payload key limit


def test_more_unread_threads_than_one_page_are_all_handled(harness: Any) -> None:
    issues = [issue(n, [said("alice", f"@tusk-bot task {n}")]) for n in range(1, 56)]
    # 55 runs of one requester: past the default limits across runs, which are not tested here.
    unlimited = SETTINGS.limits.model_copy(
        update={
            "runs_per_requester": None,
            "runs_per_repository": None,
            "requester_budget_usd": None,
        }
    )
    h = harness(scenario(issues=issues), SETTINGS.model_copy(update={"limits": unlimited}))
    _, report = h.poller.cycle(PollState())
    assert report.threads == 55  # the notifications endpoint pages at 50
    assert sorted(doc.trigger.number for doc in h.sent().tasks) == list(range(1, 56))
    assert not any(t["unread"] for t in h.threads())


def test_without_push_access_trust_comes_from_author_association_and_says_so(
    harness: Any, local_github: Any
) -> None:
    """GitHub answers the permission endpoint 403 to a caller without push access (the bot
    works in forks); the trigger's author_association decides, and the run records that."""
    comments = [said("bob", REAL), said("bob", "@tusk-bot go away")]
    comments.append(said("mallory", "@tusk-bot go away"))
    # alice's on a thread of its own: one run per thread (C1)
    scn = scenario(issues=[issue(1, comments), issue(2, [said("alice", REAL + " too")])])
    del scn["repos"][0]["collaborators"][BOT]
    h = harness(scn)
    _, report = h.poller.cycle(PollState())
    assert report.errors == []
    sent = h.sent()
    trust = {(d.actor, d.trust_level, d.trust_source) for d in sent.tasks}
    assert trust == {
        ("bob", "collaborator", "author_association"),
        ("alice", "owner", "repository_owner"),
    }
    away = {(r.actor, r.trust_level, r.trust_source) for r in sent.go_aways}
    assert away == {
        ("bob", "collaborator", "author_association"),
        ("mallory", "external", "author_association"),
    }
    refused = [e for e in local_github.journal() if "/collaborators/" in e["path"]]
    assert refused and {e["status"] for e in refused} == {403}


def test_with_push_access_the_permission_endpoint_decides_and_says_so(harness: Any) -> None:
    h = harness(scenario(issues=[issue(1, [said("bob", REAL)])]))
    h.poller.cycle(PollState())
    (doc,) = h.sent().tasks
    assert (doc.trust_level, doc.trust_source) == ("collaborator", "permission_endpoint")


def test_a_body_mention_is_not_dispatched_again_when_the_thread_gets_a_new_comment(
    harness: Any, local_github: Any
) -> None:
    """The issue's updated_at moves with every comment; the body is not a new trigger then."""
    h = harness(scenario(issues=[issue(1, [], body="@tusk-bot please triage")]))
    h.poller.cycle(PollState())
    local_github.gateway("alice").post(
        f"/repos/{REPO}/issues/1/comments", json={"body": "@tusk-bot and this"}
    )
    again = make_poller(local_github)  # --once: a fresh process, no memory of the first
    again.poller.cycle(PollState())
    sent = again.sent()
    assert [doc.trigger.type for doc in sent.tasks] == ["issue_body", "issue_comment"]
    assert len(sent.order) == 2  # the body's job went out once, not again


def test_many_shards_are_dispatched_once_each_under_the_content_limit(harness: Any) -> None:
    """A large context is many dispatches; GitHub may count them as content. The gateway
    paces them, waits out a refusal, and sends each shard exactly once."""
    settings = SETTINGS.model_copy(
        update={"limits": SETTINGS.limits.model_copy(update={"shard_bytes": 1024})}
    )
    noise = [hashlib.sha256(str(i).encode()).hexdigest() * 8 for i in range(60)]  # no gzip gain
    comments = [said("bob", f"comment {i} {text}") for i, text in enumerate(noise)]
    scn = scenario(issues=[issue(1, [*comments, said("alice", REAL)])])
    scn["settings"] = {"secondary_limits": {"content_per_minute": 4}}
    h = harness(scn, settings)
    _, report = h.poller.cycle(PollState())
    assert report.errors == []
    sent = h.sent()
    (doc,) = sent.tasks
    shards = [d["client_payload"]["shard_index"] for d in h.github.dispatches()]
    assert sorted(shards) == list(range(sent.shard_counts[doc.jobid])) and len(shards) > 4
    assert any(e["status"] == 403 for e in h.github.journal())  # the limit bit, and was survived


DIGEST = "sha256:" + "cd" * 32
PREVIEW = (
    '<!-- tusk:preview {"control_repo":"alice/tusk-control","digest":"'
    + DIGEST
    + '","jobid":"job-1","log":7} -->\n### ⏸️ Waiting for approval'
)


def test_apply_and_discard_dispatch_the_approval_job_never_a_task(harness: Any) -> None:
    comments = [
        said(BOT, PREVIEW),
        said("alice", f"@tusk-bot apply {DIGEST}"),
        said("mallory", "@tusk-bot discard"),  # anyone's: the apply job says who may
    ]
    h = harness(scenario(issues=[issue(1, comments)]))
    _, report = h.poller.cycle(PollState())
    sent = h.sent()
    assert sent.tasks == [] and sent.go_aways == []
    by_actor = {r.actor: r for r in sent.approvals}
    assert set(by_actor) == {"alice", "mallory"}, report.lines()
    assert by_actor["alice"].verb == "apply" and by_actor["alice"].digest == DIGEST
    assert by_actor["alice"].number == 1 and by_actor["alice"].repo == REPO
    assert by_actor["mallory"].verb == "discard" and by_actor["mallory"].digest is None
    assert by_actor["alice"].comment_url.endswith(f"#issuecomment-{by_actor['alice'].comment_id}")
    assert any("dispatched approval" in line for line in report.lines())


def test_an_approval_where_nothing_waits_is_skipped(harness: Any) -> None:
    h = harness(scenario(issues=[issue(1, [said("alice", f"@tusk-bot apply {DIGEST}")])]))
    _, report = h.poller.cycle(PollState())
    assert h.github.dispatches() == []
    assert any("no staged set waits for approval" in line for line in report.skipped)


def test_a_preview_quoted_by_someone_else_is_no_pending_set(harness: Any) -> None:
    comments = [said("mallory", PREVIEW), said("alice", "@tusk-bot apply")]
    h = harness(scenario(issues=[issue(1, comments)]))
    h.poller.cycle(PollState())
    assert h.github.dispatches() == []


def test_the_poller_pages_through_githubs_repository_links(harness: Any, local_github: Any) -> None:
    """Pages of two: the control repository's issues (state and log issues) are read page
    after page where GitHub's Link points, /repositories/{id}/..., and every mention is
    dispatched once."""
    issues = [issue(n, [said("alice", f"@tusk-bot task {n}")]) for n in range(1, 4)]
    world = scenario(issues=issues)
    control = next(r for r in world["repos"] if r["name"] == "alice/control")
    control["issues"] = [
        {"number": n, "author": "alice", "title": f"notes {n}", "labels": ["workflow"]}
        for n in range(1, 6)
    ]
    # Three runs of one requester: past the default spend cap, which is not tested here.
    uncapped = SETTINGS.limits.model_copy(update={"requester_budget_usd": None})
    h = harness(
        {**world, "settings": {**world.get("settings", {}), "page_size": 2}},
        SETTINGS.model_copy(update={"limits": uncapped}),
    )
    h.poller.cycle(PollState())
    assert sorted(doc.trigger.number for doc in h.sent().tasks) == [1, 2, 3]
    by_id = [e for e in local_github.journal() if e["path"].startswith("/repositories/")]
    assert {e.get("route") for e in by_id} == {"/repos/alice/control/issues"}
    assert local_github.take_violations() == []
