"""P4: the permission marker only narrows, and a malformed one fails closed."""

from __future__ import annotations

import pytest

from tusk.contracts.models import PermissionConfig
from tusk.poller.permissions import (
    MarkerError,
    effective_permissions,
    find_marker_text,
    parse_marker,
)

DEFAULTS = PermissionConfig(
    operations=("comment", "issue", "pull_request", "push", "memory"),
    comments_per_thread=2,
    issues_per_repo=1,
    prs_per_repo=1,
    memory_writes=3,
)


def effective(body: str, defaults: PermissionConfig = DEFAULTS) -> PermissionConfig:
    return effective_permissions(defaults, body)


def test_no_marker_keeps_the_defaults() -> None:
    assert effective("@tusk-bot fix the typo") == DEFAULTS


def test_mission_example_marker() -> None:
    result = effective("@tusk-bot [permissions: comment-on-this-issue, pr-limit=1] fix the typo")
    assert result.error is None
    assert result.marker == "[permissions: comment-on-this-issue, pr-limit=1]"
    assert result.operations == ("comment",)
    assert result.only_this_thread
    assert (result.issues_per_repo, result.prs_per_repo, result.memory_writes) == (0, 0, 0)
    assert result.comments_per_thread == 2


def test_limits_never_widen_the_defaults() -> None:
    result = effective("@tusk-bot [permissions: comment-limit=9, pr-limit=5] go")
    assert result.comments_per_thread == 2
    assert result.prs_per_repo == 1
    assert result.error is None


def test_zero_limit_removes_the_operation() -> None:
    result = effective("@tusk-bot [permissions: pr-limit=0] go")
    assert "pull_request" not in result.operations
    assert result.prs_per_repo == 0


def test_no_flags_remove_operations_and_their_limits() -> None:
    result = effective("@tusk-bot [permissions: no-push, no-issue, no-memory] go")
    assert result.operations == ("comment", "pull_request")
    assert result.issues_per_repo == 0 and result.memory_writes == 0


def test_read_only_allows_no_write() -> None:
    result = effective("@tusk-bot [Permissions: READ-ONLY] explain this")
    assert result.operations == ()
    assert result.comments_per_thread == 0


def test_repos_restricts_and_intersects_configured_repos() -> None:
    result = effective("@tusk-bot [permissions: repos=alice/widgets+alice/gadgets] go")
    assert result.repos == ("alice/widgets", "alice/gadgets")
    narrowed = DEFAULTS.model_copy(update={"repos": ("alice/widgets",)})
    assert effective("@tusk-bot [permissions: repos=alice/widgets+bob/x] go", narrowed).repos == (
        "alice/widgets",
    )


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("@tusk-bot [permissions: everything] go", "unknown permission"),
        ("@tusk-bot [permissions: pr-limit=many] go", "whole number"),
        ("@tusk-bot [permissions: pr-limit=1, pr-limit=0] go", "twice"),
        ("@tusk-bot [permissions: ] go", "lists no permissions"),
        ("@tusk-bot [permissions: comment-on-this-issue go", "not closed"),
        ("@tusk-bot [permissions: no-pr] and [permissions: no-push]", "more than one"),
        ("@tusk-bot [permissions: repos=not-a-repo] go", "owner/name"),
        ("@tusk-bot [permissions: admin=1] go", "unknown setting"),
        ("@tusk-bot [permissions: no-pr,, no-push] go", "empty item"),
    ],
)
def test_malformed_marker_fails_closed_with_the_reason(body: str, reason: str) -> None:
    result = effective(body)
    assert result.error is not None and reason in result.error
    assert result.marker is not None and result.marker.lower().startswith("[permissions")
    assert result.operations == ("comment",)
    assert result.only_this_thread
    assert result.comments_per_thread == 1
    assert (result.issues_per_repo, result.prs_per_repo, result.memory_writes) == (0, 0, 0)


def test_fail_closed_never_grants_what_defaults_lack() -> None:
    no_comments = DEFAULTS.model_copy(update={"operations": ("push",), "comments_per_thread": 0})
    result = effective("@tusk-bot [permissions: bogus]", no_comments)
    assert result.operations == ()


def test_marker_in_code_or_quote_is_ignored() -> None:
    assert find_marker_text("> @tusk-bot [permissions: read-only]\n\n@tusk-bot go") is None
    assert find_marker_text("`[permissions: read-only]` @tusk-bot go") is None
    assert effective("```\n[permissions: bogus\n```\n@tusk-bot go") == DEFAULTS


def test_parse_marker_accepts_spacing_and_case() -> None:
    marker = parse_marker("[ Permissions :  No-PR ,  comment-limit = 1 ]")
    assert marker.flags == frozenset({"no-pr"})
    assert marker.limits == {"comment-limit": 1}


def test_overlong_marker_is_refused() -> None:
    with pytest.raises(MarkerError):
        parse_marker("[permissions: " + "no-pr, " * 100 + "no-push]")


def test_a_misspelt_singular_marker_fails_closed_instead_of_granting_the_defaults() -> None:
    result = effective("@tusk-bot [permission: read-only] look into this")
    assert result.error is not None and "plural" in result.error
    assert result.operations == ("comment",) and result.only_this_thread
    assert (result.issues_per_repo, result.prs_per_repo, result.memory_writes) == (0, 0, 0)


@pytest.mark.parametrize(
    "body",
    [
        "@tusk-bot ［permissions: no-pr］ fix it",  # full-width brackets
        "@tusk-bot [permissions： no-pr] fix it",  # full-width colon
        "@tusk-bot ［ｐｅｒｍｉｓｓｉｏｎｓ：　ｎｏ－ｐｒ］ fix it",  # all of it full width
        "@tusk-bot [permissions: no-pr，no-issue] fix it",  # full-width comma
    ],
)
def test_full_width_markers_are_read_after_nfkc(body: str) -> None:
    result = effective(body)
    assert result.error is None
    assert "pull_request" not in result.operations
    assert result.marker is not None and result.marker in body  # kept as typed


def test_full_width_limit_values_are_numbers_after_nfkc() -> None:
    result = effective("@tusk-bot [permissions: comment-limit＝１] fix it")
    assert result.error is None and result.comments_per_thread == 1


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("@tusk-bot 【permissions: no-pr】 fix it", "square brackets"),
        ("@tusk-bot 〔permissions：no-pr〕", "square brackets"),
        ("@tusk-bot [permissions: no-pr、no-issue] fix it", "unknown permission"),
        ("@tusk-bot ［permissions: no-pr fix it", "not closed"),
    ],
)
def test_marker_lookalikes_fail_closed_with_the_reason(body: str, reason: str) -> None:
    result = effective(body)
    assert result.error is not None and reason in result.error
    assert result.operations == ("comment",) and result.only_this_thread
    assert result.marker  # the text that looked like a marker, for the log issue


def test_marker_after_windows_line_ends_is_cut_where_it_is() -> None:
    body = "hello\r\n\r\n@tusk-bot [permissions: no-pr] fix it"
    assert find_marker_text(body) == "[permissions: no-pr]"
    assert effective(body).marker == "[permissions: no-pr]"


def test_a_full_width_marker_in_code_is_still_ignored() -> None:
    assert effective("@tusk-bot fix `［permissions: no-pr］`") == DEFAULTS


@pytest.mark.parametrize(
    "body",
    [
        "@tusk-bot [permis\u200bsions: no-pr] fix it",  # a zero-width space pasted in
        "@tusk-bot [permissions\u00ad: no-pr] fix it",  # a soft hyphen
        "@tusk-bot [\u2060permissions: no-pr] fix it",  # a word joiner
        "@tusk-bot [permissions: no\u200b-pr] fix it",  # inside an item
    ],
)
def test_a_marker_is_read_as_github_shows_it_without_invisible_characters(body: str) -> None:
    """github.com shows these exactly like [permissions: no-pr]: they must not be
    ignored (the run would get the defaults) nor mean anything else."""
    result = effective(body)
    assert result.error is None
    assert "pull_request" not in result.operations
    assert result.marker is not None and result.marker in body


@pytest.mark.parametrize(
    "body",
    [
        "@tusk-bot [\u0440ermissions: no-pr] fix it",  # Cyrillic er
        "@tusk-bot [p\u0435rmissions: no-pr] fix it",  # Cyrillic ie
        "@tusk-bot [\u1d18ermissions: no-pr] fix it",  # Latin small capital P
        "@tusk-bot [permissions: no-pr] and [\u0440ermissions: no-issue]",  # one of two
    ],
)
def test_a_marker_in_look_alike_letters_fails_closed(body: str) -> None:
    result = effective(body)
    assert result.error is not None and "another alphabet" in result.error
    assert result.operations == ("comment",) and result.only_this_thread
    assert result.marker  # the text that looked like a marker, for the log issue


# --------------------------------------------------------------------------- approve


def test_approve_asks_that_every_write_wait_for_approval() -> None:
    got = effective("@tusk-bot [permissions: approve, no-issue] fix it")
    assert got.approve and "issue" not in got.operations
    assert not effective("@tusk-bot fix it").approve


def test_no_marker_takes_an_approval_the_defaults_require_away() -> None:
    required = DEFAULTS.model_copy(update={"approve": True})
    for body in ("@tusk-bot [permissions: no-pr] fix", "@tusk-bot [permissions: pr-limit=1] x"):
        assert effective(body, required).approve


def test_a_marker_that_fails_closed_but_names_approve_keeps_it() -> None:
    got = effective("@tusk-bot [permissions: approve, no-such-thing] fix it")
    assert got.error and got.approve and got.only_this_thread
    assert not effective("@tusk-bot [permissions: no-such-thing] fix it").approve


# --------------------------------------------------------------------------- the run's own limits

CONFIGURED = DEFAULTS.model_copy(update={"budget_usd": 5.0, "max_turns": 60, "run_minutes": 30.0})


def test_budget_turns_and_minutes_lower_the_configured_values() -> None:
    result = effective("@tusk-bot [permissions: budget=0.5, turns=10, minutes=5] try", CONFIGURED)
    assert result.error is None
    assert (result.budget_usd, result.max_turns, result.run_minutes) == (0.5, 10, 5)
    # Everything else stays as configured.
    assert result.operations == CONFIGURED.operations
    assert result.comments_per_thread == 2
    same = effective("@tusk-bot [permissions: budget=$5, turns=60] as is", CONFIGURED)
    assert same.error is None and (same.budget_usd, same.max_turns) == (5.0, 60)


def test_no_marker_keeps_the_configured_run_limits() -> None:
    result = effective("@tusk-bot [permissions: no-pr] go", CONFIGURED)
    assert (result.budget_usd, result.max_turns, result.run_minutes) == (5.0, 60, 30.0)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("[permissions: budget=500]", "budget=500 is above what agent.max_budget_usd allows (5)"),
        ("[permissions: turns=61]", "turns=61 is above what limits.max_turns allows (60)"),
        ("[permissions: minutes=31]", "minutes=31 is above what limits.run_minutes allows (30)"),
        ("[permissions: budget=0]", "budget must be more than 0"),
        ("[permissions: turns=0]", "turns must be more than 0"),
        ("[permissions: budget=1e3]", "budget needs an amount in USD such as 0.50"),
        ("[permissions: budget=-1]", "budget needs an amount in USD such as 0.50"),
        ("[permissions: turns=2.5]", "turns needs a whole number"),
        ("[permissions: budget=1, budget=2]", "budget is given twice"),
    ],
)
def test_a_run_limit_above_the_configured_one_fails_closed(body: str, reason: str) -> None:
    result = effective(f"@tusk-bot {body} spend freely", CONFIGURED)
    assert result.error is not None and reason in result.error, result.error
    # Fail closed: one reply on the thread, and never more than the configured limits.
    assert result.operations == ("comment",) and result.only_this_thread
    assert result.comments_per_thread == 1 and result.prs_per_repo == 0
    assert (result.budget_usd, result.max_turns, result.run_minutes) == (5.0, 60, 30.0)


def test_a_near_miss_with_a_run_limit_fails_closed() -> None:
    result = effective("@tusk-bot (permissions: budget=1) go", CONFIGURED)
    assert result.error is not None and "looks like a permission marker" in result.error
