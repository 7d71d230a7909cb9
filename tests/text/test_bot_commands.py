"""The bot-command grammar (tusk.text.commands): pure, table-driven."""

from __future__ import annotations

import pytest

from tusk.text.commands import VERBS, Verb, asks_to_leave, command_words, parse_command

BOT = "tusk-bot"


@pytest.mark.parametrize(
    "body",
    [
        "@tusk-bot please go away",
        "@tusk-bot, go away please",
        "@tusk-bot go away",
        "@Tusk-Bot   GO AWAY!!",
        "please go away @tusk-bot",
        "Go away, @tusk-bot.",
        "@tusk-bot could you go away?",
        "@tusk-bot go away now, thanks",
        "hey @tusk-bot: kindly go away 🙏",
        "@tusk-bot\n\nplease go away",
        "Thanks for the help.\n\n@tusk-bot please go away",
        "@tusk-bot go away, and take your pull request with you",
    ],
)
def test_a_short_message_asking_the_bot_to_leave_is_go_away(body: str) -> None:
    assert asks_to_leave(body, bot=BOT)
    command = parse_command(body, bot=BOT)
    assert command is not None and command.verb == "go_away"


@pytest.mark.parametrize(
    "body",
    [
        "@tusk-bot don't go away",
        "@tusk-bot please never go away",
        "@tusk-bot go and look away from the tests",
        "@tusk-bot fix the go away button",
        "go away",  # not addressed to the bot
        "@alice please go away",  # addressed to someone else
        "@tusk-bot @alice please go away",  # not to the bot alone
        "`@tusk-bot please go away` removes the bot",
        "> @tusk-bot please go away\n\nno, stay",
        "<!-- @tusk-bot please go away -->",
        "@tusk-bot please go awayyy",
        "@tusk-bot-helper please go away",
    ],
)
def test_anything_else_is_no_go_away(body: str) -> None:
    assert not asks_to_leave(body, bot=BOT)


def test_a_long_message_is_read_line_by_line_not_as_one_command() -> None:
    body = "@tusk-bot\n" + "please " * 60 + "\ngo away"
    assert not asks_to_leave(body, bot=BOT)  # too long to be one short message
    assert asks_to_leave("@tusk-bot\nplease\ngo away", bot=BOT)


def test_the_go_away_words_follow_the_configuration() -> None:
    assert asks_to_leave("@tusk-bot please leave us", bot=BOT, phrase="leave us")
    assert not asks_to_leave("@tusk-bot please go away", bot=BOT, phrase="leave us")


def test_adding_a_verb_is_one_table_entry() -> None:
    verbs = (*VERBS, Verb("apply", "apply"))
    command = parse_command("@tusk-bot please apply", bot=BOT, verbs=verbs)
    assert command is not None and command.verb == "apply"
    assert parse_command("@tusk-bot apply the patch to main", bot=BOT, verbs=verbs) is None
    leaving = parse_command("@tusk-bot go away", bot=BOT, verbs=verbs)
    assert leaving is not None and leaving.verb == "go_away"


def test_words_drop_punctuation_and_emoji() -> None:
    assert command_words("Go, away!! 🙏 don’t") == ["go", "away", "don't"]
