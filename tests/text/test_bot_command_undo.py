"""The ``undo`` bot command (tusk.text.commands): pure, table-driven."""

from __future__ import annotations

import pytest

from tusk.text.commands import asks_to_leave, asks_to_undo

BOT = "tusk-bot"


@pytest.mark.parametrize(
    "body",
    [
        "@tusk-bot undo",
        "@tusk-bot please undo",
        "@Tusk-Bot UNDO!",
        "undo @tusk-bot",
        "@tusk-bot could you undo, thanks",
        "That was wrong.\n\n@tusk-bot undo",
    ],
)
def test_a_short_message_asking_to_undo_is_undo(body: str) -> None:
    assert asks_to_undo(body, bot=BOT)
    assert not asks_to_leave(body, bot=BOT)


@pytest.mark.parametrize(
    "body",
    [
        "@tusk-bot undo the last commit in the PR",  # a task, not the command
        "@tusk-bot don't undo",
        "> @tusk-bot undo",  # a quote
        "`@tusk-bot undo`",  # code
        "@alice undo",
        "@tusk-bot go away",  # leaving wins: a request to leave is never an undo
        "@tusk-bot please go away and undo",
    ],
)
def test_other_text_is_not_undo(body: str) -> None:
    assert not asks_to_undo(body, bot=BOT)
