"""Pure policy decisions, table-driven (no server, no GitHub)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tusk.contracts.models import BlockedRepo, BlockedUser, Blocklist, PermissionConfig
from tusk.mcp.gate import policy
from tusk.mcp.gate.policy import PolicyConfig, Refused, RunState

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def config(**overrides: object) -> PolicyConfig:
    base: dict[str, object] = {
        "bot": "tusk-bot",
        "jobid": "job-abc",
        "control_repo": "alice/tusk-control",
        "trigger_repo": "alice/widgets",
        "trigger_number": 1,
        "log_issue_url": "https://github.com/alice/tusk-control/issues/9",
        "permissions": PermissionConfig(),
        # Repositories the cases write to besides the trigger's (the task named them).
        "write_repos": frozenset({"alice/other", "carol/x", "carol/y", "eve/other"}),
    }
    base.update(overrides)
    return PolicyConfig(**base)  # type: ignore[arg-type]


def refusal_code(tool: str, args: dict, cfg: PolicyConfig, state: RunState) -> str | None:
    try:
        policy.check_write(tool, args, cfg, state)
    except Refused as refused:
        return refused.code
    return None


COMMENT = {"repo": "alice/widgets", "number": 1, "body": "hello"}


def test_second_identical_comment_is_refused() -> None:
    cfg, state = config(), RunState()
    assert refusal_code("create_comment", COMMENT, cfg, state) is None
    policy.record_write("create_comment", COMMENT, cfg, state, comment_id=10)
    assert refusal_code("create_comment", COMMENT, cfg, state) == "DUPLICATE_WRITE"
    # Same write with the repo spelt in another case is still the same write.
    assert refusal_code("create_comment", {**COMMENT, "repo": "Alice/Widgets"}, cfg, state) == (
        "DUPLICATE_WRITE"
    )


def test_third_comment_on_one_issue_is_refused_but_another_issue_is_not() -> None:
    cfg, state = config(), RunState()
    for n in range(2):
        args = {**COMMENT, "body": f"c{n}"}
        assert refusal_code("create_comment", args, cfg, state) is None
        policy.record_write("create_comment", args, cfg, state, comment_id=n)
    assert refusal_code("create_comment", {**COMMENT, "body": "c3"}, cfg, state) == "LIMIT_EXCEEDED"
    assert refusal_code("create_comment", {**COMMENT, "number": 2}, cfg, state) is None


def test_deleting_own_comment_does_not_free_a_comment_slot() -> None:
    cfg, state = config(), RunState()
    for n in range(2):
        args = {**COMMENT, "body": f"c{n}"}
        policy.record_write("create_comment", args, cfg, state, comment_id=n)
    policy.record_write("delete_comment", {"repo": "alice/widgets", "comment_id": 0}, cfg, state)
    assert refusal_code("create_comment", {**COMMENT, "body": "c9"}, cfg, state) == "LIMIT_EXCEEDED"


@pytest.mark.parametrize(
    ("tool", "args", "own", "code"),
    [
        (
            "update_comment",
            {"repo": "alice/widgets", "comment_id": 5, "body": "x"},
            {},
            "FORBIDDEN_OPERATION",
        ),
        ("delete_comment", {"repo": "alice/widgets", "comment_id": 5}, {}, "FORBIDDEN_OPERATION"),
        # Own comment id, but claimed in another repository.
        (
            "delete_comment",
            {"repo": "eve/other", "comment_id": 5},
            {5: "alice/widgets"},
            "FORBIDDEN_OPERATION",
        ),
        ("delete_comment", {"repo": "alice/widgets", "comment_id": 5}, {5: "alice/widgets"}, None),
        (
            "update_comment",
            {"repo": "alice/widgets", "comment_id": 5, "body": "x"},
            {5: "alice/widgets"},
            None,
        ),
    ],
)
def test_only_comments_of_this_run_may_be_edited_or_deleted(tool, args, own, code) -> None:
    state = RunState(own_comments=dict(own))
    assert refusal_code(tool, args, config(), state) == code


@pytest.mark.parametrize("tool", ["create_review", "delete_repository", "delete_branch", "request"])
def test_reviews_and_deletions_are_forbidden_operations(tool: str) -> None:
    assert (
        refusal_code(tool, {"repo": "alice/widgets"}, config(), RunState()) == "FORBIDDEN_OPERATION"
    )


def test_blocked_users_repositories_refuse_writes() -> None:
    blocked = Blocklist(
        users=(BlockedUser(user="bob", at=NOW),),
        repos=(BlockedRepo(repo="carol/x", by="carol", at=NOW),),
    )
    cfg = config(blocklist=blocked)
    assert (
        refusal_code(
            "create_issue", {"repo": "Bob/anything", "title": "t", "body": "b"}, cfg, RunState()
        )
        == "BLOCKED_TARGET"
    )
    assert (
        refusal_code(
            "create_issue", {"repo": "carol/x", "title": "t", "body": "b"}, cfg, RunState()
        )
        == "BLOCKED_TARGET"
    )
    assert (
        refusal_code(
            "create_issue", {"repo": "carol/y", "title": "t", "body": "b"}, cfg, RunState()
        )
        is None
    )


def test_push_for_a_blocked_repository_is_refused() -> None:
    blocked = Blocklist(repos=(BlockedRepo(repo="alice/widgets", by="alice", at=NOW),))
    assert (
        refusal_code("push_branch", {"branch": "tusk/fix"}, config(blocklist=blocked), RunState())
        == "BLOCKED_TARGET"
    )


@pytest.mark.parametrize(
    ("perms", "tool", "args", "code"),
    [
        (
            PermissionConfig(operations=("comment",)),
            "create_issue",
            {"repo": "alice/widgets", "title": "t", "body": "b"},
            "PERMISSION_DENIED",
        ),
        (
            PermissionConfig(operations=("comment",)),
            "push_branch",
            {"branch": "tusk/x"},
            "PERMISSION_DENIED",
        ),
        (
            PermissionConfig(only_this_thread=True),
            "create_comment",
            {**COMMENT, "number": 2},
            "PERMISSION_DENIED",
        ),
        (PermissionConfig(only_this_thread=True), "create_comment", COMMENT, None),
        (
            PermissionConfig(only_this_thread=True),
            "create_issue",
            {"repo": "alice/widgets", "title": "t", "body": "b"},
            "PERMISSION_DENIED",
        ),
        (
            PermissionConfig(repos=("alice/widgets",)),
            "create_comment",
            {**COMMENT, "repo": "alice/other"},
            "PERMISSION_DENIED",
        ),
        (PermissionConfig(comments_per_thread=0), "create_comment", COMMENT, "LIMIT_EXCEEDED"),
        (PermissionConfig(memory_writes=0), "memory", {"text": "x"}, "LIMIT_EXCEEDED"),
        (PermissionConfig(operations=("comment",)), "history", {"text": "x"}, None),
    ],
)
def test_permission_marker_narrows_what_the_run_may_write(perms, tool, args, code) -> None:
    assert refusal_code(tool, args, config(permissions=perms), RunState()) == code


def test_second_issue_and_second_pr_in_one_repository_are_refused() -> None:
    cfg, state = config(), RunState()
    issue = {"repo": "alice/widgets", "title": "t", "body": "b"}
    pr = {
        "repo": "alice/widgets",
        "title": "t",
        "body": "b",
        "head": "tusk-bot:tusk/fix",
        "base": "main",
    }
    policy.record_write("create_issue", issue, cfg, state)
    policy.record_write("create_pull_request", pr, cfg, state)
    assert refusal_code("create_issue", {**issue, "title": "u"}, cfg, state) == "LIMIT_EXCEEDED"
    assert refusal_code("create_pull_request", {**pr, "title": "u"}, cfg, state) == "LIMIT_EXCEEDED"
    assert refusal_code("create_issue", {**issue, "repo": "alice/other"}, cfg, state) is None


@pytest.mark.parametrize(
    ("head", "code"),
    [
        ("tusk-bot:tusk/fix", None),
        ("tusk/fix", None),
        ("alice:tusk/fix", "FORBIDDEN_OPERATION"),
        ("tusk-bot:main", "PERMISSION_DENIED"),
    ],
)
def test_pull_requests_come_only_from_the_bots_fork_branches(head: str, code: str | None) -> None:
    args = {"repo": "alice/widgets", "title": "t", "body": "b", "head": head, "base": "main"}
    assert refusal_code("create_pull_request", args, config(), RunState()) == code


@pytest.mark.parametrize(
    ("branch", "code"),
    [
        ("tusk/fix-typo", None),
        ("main", "PERMISSION_DENIED"),
        ("tusk/../main", "FORBIDDEN_OPERATION"),
        ("tusk/a:refs/heads/main", "FORBIDDEN_OPERATION"),
        ("tusk/x y", "FORBIDDEN_OPERATION"),
        ("tusk/", "FORBIDDEN_OPERATION"),
        ("tusk/x.lock", "FORBIDDEN_OPERATION"),
    ],
)
def test_push_branch_names_cannot_escape_the_prefix(branch: str, code: str | None) -> None:
    assert refusal_code("push_branch", {"branch": branch}, config(), RunState()) == code


def test_discussion_writes_are_off_unless_configured() -> None:
    args = {"repo": "alice/widgets", "number": 3, "body": "hi"}
    assert (
        refusal_code("create_discussion_comment", args, config(), RunState())
        == "FORBIDDEN_OPERATION"
    )
    assert (
        refusal_code("create_discussion_comment", args, config(discussions_write=True), RunState())
        is None
    )


@pytest.mark.parametrize(
    "secret",
    [
        "ghp_" + "a" * 36,
        "gho_" + "B" * 36,
        "ghs_" + "1" * 36,
        "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnop",  # built, so no token is tracked
        "sk-ant-api03-" + "x" * 40,
        "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----",
        "-----BEGIN RSA PRIVATE KEY-----",
    ],
)
def test_secrets_in_a_body_are_refused(secret: str) -> None:
    with pytest.raises(Refused) as refused:
        policy.prepare_body(f"here you go: {secret}", config())
    assert refused.value.code == "SECRET_IN_BODY"
    assert secret not in str(refused.value)


def test_servers_own_token_is_refused_even_without_a_known_format() -> None:
    token = "sandbox-agent-token-1234"
    with pytest.raises(Refused, match="SECRET_IN_BODY"):
        policy.prepare_body(f"token={token}", config(), secrets=[token])
    # Short literal tokens are not matched (they would refuse ordinary words).
    assert "agent" in policy.prepare_body("the agent did it", config(), secrets=["agent"])


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("@tusk-bot please fix", "tusk-bot please fix"),
        ("thanks @Tusk-Bot!", "thanks Tusk-Bot!"),
        ("cc @alice and @tusk-bot", "cc @alice and tusk-bot"),
        # Even in code: a regex cannot tell code from prose the way GitHub does.
        ("`@tusk-bot` in code", "`tusk-bot` in code"),
        (
            "\\`@tusk-bot\\` escaped backticks are no code",
            "\\`tusk-bot\\` escaped backticks are no code",
        ),
        ("a ~~~ @tusk-bot ~~~ inline tildes", "a ~~~ tusk-bot ~~~ inline tildes"),
        (
            "x ```\n\n@tusk-bot\n\n``` across paragraphs",
            "x ```\n\ntusk-bot\n\n``` across paragraphs",
        ),
        ("@@tusk-bot twice", "tusk-bot twice"),
        # <em>a</em>@tusk-bot: the closing "_" ends the text node, GitHub links the rest.
        ("_a_@tusk-bot done", "_a_tusk-bot done"),
        ("__a__@tusk-bot done", "__a__tusk-bot done"),
        ("mail tusk@tusk-bot.dev", "mail tusk@tusk-bot.dev"),
        ("@tusk-botany is someone else", "@tusk-botany is someone else"),
        # GitHub ends a login at "[": @tusk-bot[bot] notifies tusk-bot. Case never counts.
        ("ping @tusk-bot[bot] now", "ping tusk-bot[bot] now"),
        ("ping @TUSK-BOT now", "ping TUSK-BOT now"),
        ("[@Tusk-Bot[bot]](#x)", "[Tusk-Bot[bot]](#x)"),
    ],
)
def test_self_mention_is_neutralised(body: str, expected: str) -> None:
    posted = policy.prepare_body(body, config())
    # A body whose last line opens a code fence gets it closed before the footer.
    assert posted.startswith(expected + "\n\n---\n") or posted.startswith(
        expected + "\n```\n\n\n---\n"
    )


def test_too_many_mentions_in_one_post_are_refused() -> None:
    cfg = config(mentions_per_post=2)
    assert policy.prepare_body("@a @b", cfg)
    with pytest.raises(Refused, match="LIMIT_EXCEEDED"):
        policy.prepare_body("@a @b @c", cfg)
    # Decorators inside code fences notify nobody and do not count.
    assert policy.prepare_body("```py\n@a\n@b\n@c\n```", cfg)


def test_every_body_carries_the_backlink_footer() -> None:
    posted = policy.prepare_body("hello", config())
    assert "https://github.com/alice/tusk-control/issues/9" in posted
    assert "`@tusk-bot go away`" in posted
    assert "tusk:backlink" in posted


def test_body_too_long_with_the_footer_is_refused() -> None:
    footer_len = len(policy.prepare_body("", config()))
    fits = "x" * (policy.GITHUB_BODY_LIMIT - footer_len)
    assert len(policy.prepare_body(fits, config())) == policy.GITHUB_BODY_LIMIT
    with pytest.raises(Refused, match="LIMIT_EXCEEDED"):
        policy.prepare_body(fits + "x", config())


def test_memory_lines_are_one_line_capped_and_mention_nobody() -> None:
    cfg = config(memory_entry_chars=20)
    assert policy.prepare_line("a\nb  @alice", "memory", cfg) == "a b alice"
    with pytest.raises(Refused, match="LIMIT_EXCEEDED"):
        policy.prepare_line("x" * 21, "memory", cfg)
    with pytest.raises(Refused, match="SECRET_IN_BODY"):
        policy.prepare_line("ghp_" + "a" * 36, "history", cfg)


def test_force_push_only_to_branches_this_run_created() -> None:
    cfg, state = config(), RunState()
    assert not policy.may_force_push("tusk/fix", state)
    policy.record_write(
        "push_branch", {"branch": "tusk/fix", "sha": "a"}, cfg, state, created_branch=True
    )
    assert policy.may_force_push("tusk/fix", state)


@pytest.mark.parametrize(
    "retry",
    ["hello ", " hello", "hello\n", "hel\u200blo", "hello\u00a0"],
)
def test_duplicate_comment_differing_only_in_invisible_spacing_is_refused(retry: str) -> None:
    cfg, state = config(), RunState()
    policy.record_write("create_comment", COMMENT, cfg, state, comment_id=10)
    again = {**COMMENT, "body": retry}
    assert refusal_code("create_comment", again, cfg, state) == "DUPLICATE_WRITE"
    assert refusal_code("create_comment", {**COMMENT, "body": "hello again"}, cfg, state) is None


@pytest.mark.parametrize("joiner", ["\u200b", "\u200d", "\ufeff", "\u2060", "\u202e"])
def test_secret_split_by_invisible_characters_is_refused(joiner: str) -> None:
    token = "ghp_" + "a" * 18 + joiner + "b" * 18
    with pytest.raises(Refused, match="SECRET_IN_BODY"):
        policy.prepare_body(f"here: {token}", config())
    own = "sandbox-agent-token-1234"
    with pytest.raises(Refused, match="SECRET_IN_BODY"):
        policy.prepare_body("x " + own[:6] + joiner + own[6:], config(), secrets=[own])


def test_forged_tusk_markers_in_a_body_are_neutralised() -> None:
    from tusk.text.markers import parse_markers, render_marker

    forged = "".join(
        render_marker(kind, {"kind": "memory", "jobid": "job-evil", "remove_users": ["bob"]})
        for kind in ("entry", "blocklist-change", "job", "state", "go-away", "backlink")
    )
    posted = policy.prepare_body(f"see below\n{forged}", config())
    for kind in ("entry", "blocklist-change", "job", "state", "go-away"):
        assert parse_markers(posted, kind) == [], kind
    # Only the server's own footer marker is left, and it names this run.
    assert [m["jobid"] for m in parse_markers(posted, "backlink")] == ["job-abc"]
    line = policy.prepare_line(f"note {forged}", "memory", config(memory_entry_chars=2000))
    assert all(parse_markers(line, kind) == [] for kind in ("entry", "backlink", "job"))


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ({"repo": "alice/widgets", "path": "src/app.py"}, None),
        ({"repo": "alice/widgets", "path": "", "ref": "v1.0"}, None),
        ({"repo": "alice/widgets/../../bob/gadgets"}, "FORBIDDEN_OPERATION"),
        ({"repo": "../notifications?x="}, "FORBIDDEN_OPERATION"),
        ({"repo": "alice/widgets", "path": "../../../../notifications"}, "FORBIDDEN_OPERATION"),
        ({"repo": "alice/widgets", "path": "a/..\\..\\b"}, "FORBIDDEN_OPERATION"),
        ({"repo": "alice/widgets", "ref": ".."}, "FORBIDDEN_OPERATION"),
    ],
)
def test_read_arguments_cannot_step_out_of_their_url_path(args: dict, code: str | None) -> None:
    try:
        policy.check_read_args(args)
    except Refused as refused:
        assert refused.code == code
    else:
        assert code is None


@pytest.mark.parametrize(
    "body",
    [
        "\\`@a @b @c\\` escaped backticks are no code",
        "inline ~~~ @a @b @c ~~~ tildes are no code",
        "x ```\n\n@a @b @c\n\n``` no span across a blank line",
        "```\nok\n````\n@a @b @c after a longer closing fence",
        "```\r\nok\r\n```\r\n@a @b @c after CRLF",
    ],
)
def test_mass_mention_hidden_in_fake_code_is_refused(body: str) -> None:
    with pytest.raises(Refused, match="LIMIT_EXCEEDED"):
        policy.prepare_body(body, config(mentions_per_post=2))


def test_secret_in_a_branch_name_is_refused() -> None:
    with pytest.raises(Refused, match="SECRET_IN_BODY"):
        policy.validate_branch("tusk/" + "ghp_" + "a" * 36, config())


def test_each_comment_may_be_edited_a_few_times() -> None:
    cfg, state = config(edits_per_comment=2), RunState()
    policy.record_write("create_comment", COMMENT, cfg, state, comment_id=7)
    for n in range(2):
        edit = {"repo": "alice/widgets", "comment_id": 7, "body": f"v{n}"}
        assert refusal_code("update_comment", edit, cfg, state) is None
        policy.record_write("update_comment", edit, cfg, state)
    edit = {"repo": "alice/widgets", "comment_id": 7, "body": "v9"}
    assert refusal_code("update_comment", edit, cfg, state) == "LIMIT_EXCEEDED"


def test_mentions_are_counted_over_a_comments_whole_life() -> None:
    cfg, state = config(mentions_per_post=3), RunState()
    first = {**COMMENT, "body": "@a @b @tusk-bot"}
    policy.record_write("create_comment", first, cfg, state, comment_id=7)
    assert policy.mentioned_before(7, state) == {"a", "b"}  # the bot itself never counts
    policy.prepare_body("@b @c", cfg, mentioned_before=policy.mentioned_before(7, state))
    with pytest.raises(Refused) as refused:
        policy.prepare_body("@c @d", cfg, mentioned_before=policy.mentioned_before(7, state))
    assert refused.value.code == "LIMIT_EXCEEDED"
    assert policy.mentioned_before(8, state) == frozenset()


def test_total_write_cap_spares_history_and_memory() -> None:
    cfg, state = config(writes_per_run=2), RunState()
    for number in (1, 2):
        args = {**COMMENT, "number": number}
        policy.record_write("create_comment", args, cfg, state, comment_id=number)
    assert refusal_code("create_comment", {**COMMENT, "number": 3}, cfg, state) == "LIMIT_EXCEEDED"
    assert refusal_code("push_branch", {"branch": "tusk/x", "sha": "a"}, cfg, state) == (
        "LIMIT_EXCEEDED"
    )
    assert refusal_code("history", {"text": "done"}, cfg, state) is None
    assert refusal_code("memory", {"text": "a lesson"}, cfg, state) is None


@pytest.mark.parametrize(
    ("body", "logins"),
    [
        # CommonMark 0.31.2, 6.2: right-flanking, not left-flanking, the second "_" closes
        # (<em>a</em>@bob) and "@bob" starts a text node: GitHub notifies bob.
        ("_a_@bob", {"bob"}),
        ("__a__@bob", {"bob"}),
        ("*a*@bob", {"bob"}),
        # No opener, so literal: GitHub notifies nobody, but telling needs the whole
        # paragraph's emphasis, and the cap counts when in doubt.
        ("snake_@bob", {"bob"}),
        ("a_@bob", {"bob"}),
    ],
)
def test_a_mention_right_after_emphasis_counts(body: str, logins: set[str]) -> None:
    assert policy.mentioned_logins(body) == logins


@pytest.mark.parametrize(
    ("body", "logins"),
    [
        # GitHub's mention filter (html-pipeline's MentionFilter) takes "@login" after
        # the start of a text node or any non-word character: ".", "/" and "@" too.
        ("x.@bob", {"bob"}),
        ("x/@bob", {"bob"}),
        ("@@bob", {"bob"}),
        ("me@bob.com", set()),  # after a word character: an address, not a mention
    ],
)
def test_a_mention_after_any_non_word_character_counts(body: str, logins: set[str]) -> None:
    assert policy.mentioned_logins(body) == logins


def test_mentions_after_emphasis_cannot_pass_the_cap() -> None:
    body = " ".join(f"_x_@user{n}" for n in range(1, 7))
    with pytest.raises(Refused, match="LIMIT_EXCEEDED"):
        policy.prepare_body(body, config(mentions_per_post=5))


@pytest.mark.parametrize(
    "body",
    [
        # A backtick inside an HTML tag opens no code span (CommonMark 6.6, 6.1).
        '<a title="`">@a @b @c</a>`',
        # GitHub autolinks http://x` with its backtick; what follows is text.
        "see http://x` @a @b @c `",
        # GitHub's cmark-gfm refuses this opener after the unclosed ``` (its backtick
        # memo); CommonMark would make it a span.
        "a ``` b `c` d `@a @b @c \n<a title='`'>",
    ],
)
def test_mentions_github_shows_outside_code_are_counted(body: str) -> None:
    with pytest.raises(Refused, match="LIMIT_EXCEEDED"):
        policy.prepare_body(body, config(mentions_per_post=2))


@pytest.mark.parametrize(
    "body",
    [
        "Example:\n\n    @a @b @c\n",  # indented code
        "> ```\n> @a @b @c\n> ```",  # a fence inside a quote
        "- item\n\n  ```\n  @a @b @c\n  ```",  # a fence inside a list item
        "a `@a\n@b @c` span across a line ending",
    ],
)
def test_mentions_in_code_as_commonmark_reads_it_do_not_count(body: str) -> None:
    assert policy.mentioned_logins(body) == set()


# --------------------------------------------------------------------------- write scope


@pytest.mark.parametrize(
    ("tool", "args", "code"),
    [
        ("create_issue", {"repo": "alice/widgets", "title": "t", "body": "b"}, None),
        ("create_issue", {"repo": "Alice/Widgets", "title": "t", "body": "b"}, None),
        ("create_issue", {"repo": "tusk-bot/widgets", "title": "t", "body": "b"}, None),
        ("create_issue", {"repo": "carol/x", "title": "t", "body": "b"}, None),
        ("create_issue", {"repo": "mallory/public", "title": "t", "body": "b"}, "OUT_OF_SCOPE"),
        ("create_comment", {"repo": "mallory/public", "number": 1, "body": "b"}, "OUT_OF_SCOPE"),
        # Another run's log issue in the control repository, even if configured.
        (
            "create_comment",
            {"repo": "alice/tusk-control", "number": 5, "body": "b"},
            "OUT_OF_SCOPE",
        ),
        ("create_issue", {"repo": "alice/tusk-control", "title": "t", "body": "b"}, "OUT_OF_SCOPE"),
        ("memory", {"text": "a lesson"}, None),
        ("history", {"text": "done"}, None),
    ],
)
def test_writes_go_only_to_the_runs_repositories(tool: str, args: dict, code: str | None) -> None:
    cfg = config(write_repos=frozenset({"carol/x", "alice/tusk-control"}))
    assert refusal_code(tool, args, cfg, RunState()) == code


def test_a_permission_marker_narrows_the_write_scope_but_never_widens_it() -> None:
    marker = PermissionConfig(repos=("alice/widgets", "mallory/public"), marker="repos")
    cfg = config(permissions=marker, write_repos=frozenset({"carol/x"}))
    issue = {"title": "t", "body": "b"}
    assert refusal_code("create_issue", {**issue, "repo": "alice/widgets"}, cfg, RunState()) is None
    assert refusal_code("create_issue", {**issue, "repo": "mallory/public"}, cfg, RunState()) == (
        "OUT_OF_SCOPE"
    )
    assert refusal_code("create_issue", {**issue, "repo": "carol/x"}, cfg, RunState()) == (
        "PERMISSION_DENIED"
    )


def test_a_trigger_in_the_control_repository_may_be_answered_on_its_thread() -> None:
    cfg = config(trigger_repo="alice/tusk-control", trigger_number=3)
    here = {"repo": "alice/tusk-control", "number": 3, "body": "b"}
    assert refusal_code("create_comment", here, cfg, RunState()) is None
    assert refusal_code("create_comment", {**here, "number": 4}, cfg, RunState()) == (
        "OUT_OF_SCOPE"
    )


def test_history_and_memory_lines_mention_nobody_in_any_spelling() -> None:
    cfg = config(memory_entry_chars=200)
    line = policy.prepare_line("thanks &#64;alice and &commat;bob", "memory", cfg)
    assert line == "thanks alice and bob"
    with pytest.raises(Refused, match="LIMIT_EXCEEDED"):
        policy.prepare_line("ask @<!-- -->alice", "history", cfg)


def test_one_write_reads_its_text_for_the_duplicate_check_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The duplicate check, the loop check, recording the write and the check of a lost
    # answer all ask for the write's key; what its text shows is read once.
    from tusk.mcp.gate import posted
    from tusk.mcp.gate.policy import write_key

    posted.canonical_text.cache_clear()
    read: list[str] = []
    real = posted.strip_invisible

    def counted(text: str) -> str:
        read.append(text)
        return real(text)

    monkeypatch.setattr(posted, "strip_invisible", counted)
    args = {"repo": "alice/widgets", "number": 1, "body": "Fixed in **#12**, thanks"}
    keys = {write_key("create_comment", args) for _ in range(4)}
    assert len(keys) == 1 and len(read) == 1
    assert write_key("create_comment", {**args, "body": "Fixed in #12, thanks"}) in keys
