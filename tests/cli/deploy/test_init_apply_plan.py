"""``tusk init --apply``'s planner (pure): each step done, to do or blocked, and why."""

from __future__ import annotations

import subprocess

from tusk.cli.deploy.plan import BLOCKED, DONE, NOTHING, Seen, Wanted, blob_sha, plan

FILES = {".github/workflows/poll.yml": "on: schedule\n", "tusk.yml": "bot: b\n"}
SECRETS = ("TUSK_BOT_TOKEN", "ANTHROPIC_API_KEY")


def wanted(**changes: object) -> Wanted:
    base: dict[str, object] = {
        "repo": "alice/control",
        "private": True,
        "bot": "bot",
        "files": FILES,
        "labels": ("workflow", "bug", "workflow"),
        "state_kinds": ("history", "blocklist"),
        "secrets": SECRETS,
        "exported": frozenset(SECRETS),
    }
    return Wanted(**{**base, **changes})  # type: ignore[arg-type]


def done_seen(**changes: object) -> Seen:
    base: dict[str, object] = {
        "repo_exists": True,
        "files": {path: blob_sha(text) for path, text in FILES.items()},
        "labels": frozenset({"workflow", "bug"}),
        "state_kinds": frozenset({"history", "blocklist"}),
        "bot_can_push": True,
        "secrets": frozenset(SECRETS),
        "workflows": {".github/workflows/poll.yml": "active"},
    }
    return Seen(**{**base, **changes})  # type: ignore[arg-type]


def actions(steps: list) -> list[tuple[str, str, str]]:  # type: ignore[type-arg]
    return [(step.kind, step.target, step.action) for step in steps]


def test_from_nothing_every_step_is_to_do_in_the_order_it_can_be_taken() -> None:
    steps = plan(wanted(), NOTHING)
    assert actions(steps) == [
        ("repository", "alice/control", "create"),
        ("file", ".github/workflows/poll.yml", "commit"),
        ("file", "tusk.yml", "commit"),
        ("label", "workflow", "create"),
        ("label", "bug", "create"),
        ("collaborator", "bot", "invite"),
        ("invitation", "bot", "accept"),
        ("state issue", "history", "create"),
        ("state issue", "blocklist", "create"),
        ("secret", "TUSK_BOT_TOKEN", "store"),
        ("secret", "ANTHROPIC_API_KEY", "store"),
        ("workflow", ".github/workflows/poll.yml", "enable"),
    ]
    assert steps[0].why == "a private repository"
    assert plan(wanted(private=False), NOTHING)[0].why == "a public repository"


def test_a_deployment_that_is_right_has_nothing_to_do() -> None:
    steps = plan(wanted(), done_seen())
    assert [step.action for step in steps] == [DONE] * len(steps)
    assert not any(step.todo for step in steps)


def test_a_changed_file_is_replaced_with_the_sha_it_replaces() -> None:
    seen = done_seen(files={".github/workflows/poll.yml": "0" * 40})
    steps = {(s.kind, s.target): s for s in plan(wanted(), seen)}
    poll = steps[("file", ".github/workflows/poll.yml")]
    assert (poll.action, poll.sha) == ("update", "0" * 40)
    assert steps[("file", "tusk.yml")].action == "commit"  # not on GitHub at all


def test_a_stored_secret_is_left_alone_unless_rotated_and_a_missing_one_blocks() -> None:
    seen = done_seen(secrets=frozenset({"TUSK_BOT_TOKEN"}))
    by_name = {s.target: s for s in plan(wanted(), seen) if s.kind == "secret"}
    assert by_name["TUSK_BOT_TOKEN"].action == DONE
    assert "--rotate-secrets" in by_name["TUSK_BOT_TOKEN"].why
    assert by_name["ANTHROPIC_API_KEY"].action == "store"
    rotated = plan(wanted(rotate_secrets=True), seen)
    assert [s.action for s in rotated if s.kind == "secret"] == ["store", "store"]
    # Rotating needs the value: a stored secret not exported stays as it is.
    kept = plan(wanted(rotate_secrets=True, exported=frozenset()), seen)
    assert [s.action for s in kept if s.kind == "secret"] == [DONE, BLOCKED]
    blocked = next(s for s in kept if s.action == BLOCKED)
    assert blocked.why == "not stored: export ANTHROPIC_API_KEY first"
    assert not blocked.todo


def test_an_open_invitation_is_only_accepted() -> None:
    steps = plan(wanted(), done_seen(bot_can_push=False, bot_invited=True))
    bot = [(s.kind, s.action) for s in steps if s.target == "bot"]
    assert bot == [("collaborator", DONE), ("invitation", "accept")]


def test_a_disabled_workflow_is_enabled_and_says_why() -> None:
    seen = done_seen(workflows={".github/workflows/poll.yml": "disabled_inactivity"})
    (step,) = [s for s in plan(wanted(), seen) if s.kind == "workflow"]
    assert (step.action, step.why) == ("enable", "GitHub has it disabled_inactivity")
    assert step.line() == (
        "→ workflow enable .github/workflows/poll.yml: GitHub has it disabled_inactivity"
    )


def test_blob_sha_is_gits_hash_of_the_text() -> None:
    text = "bot: my-bot\nallowed_users: [é]\n"
    git = subprocess.run(
        ["git", "hash-object", "--stdin"], input=text.encode(), capture_output=True, check=True
    )
    assert blob_sha(text) == git.stdout.decode().strip()
