"""``@bot apply [digest]`` and ``@bot discard``: the verbs that answer a preview, never a task."""

from __future__ import annotations

import pytest

from tusk.text.commands import ApprovalCommand, approval_command

BOT = "tusk-bot"
DIGEST = "sha256:" + "ab" * 32


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (f"@tusk-bot apply {DIGEST}", ApprovalCommand("apply", DIGEST)),
        (f"@Tusk-Bot  Apply `{DIGEST}`.", ApprovalCommand("apply", DIGEST)),
        ("@tusk-bot apply " + "AB" * 32, ApprovalCommand("apply", "AB" * 32)),
        ("Looks right. @tusk-bot apply", ApprovalCommand("apply", None)),
        ("@tusk-bot discard!", ApprovalCommand("discard", None)),
        ("@tusk-bot: discard", ApprovalCommand("discard", None)),
    ],
)
def test_the_verbs_are_read(body: str, expected: ApprovalCommand) -> None:
    assert approval_command(body, bot=BOT) == expected


@pytest.mark.parametrize(
    "body",
    [
        "@tusk-bot apply the patch from #3",  # a task that starts with the word
        "@tusk-bot please apply",
        f"@tusk-bot discard {DIGEST}",  # discard names no digest
        "@tusk-bot apply sha256:abc",  # not a digest: a task, not a half approval
        f"`@tusk-bot apply {DIGEST}`",  # in code: quoted, not said
        f"> @tusk-bot apply {DIGEST}",  # quoting the preview's command
        f"@tusk-botty apply {DIGEST}",
        "@tusk-bot go away",
    ],
)
def test_what_is_not_a_verb(body: str) -> None:
    assert approval_command(body, bot=BOT) is None
