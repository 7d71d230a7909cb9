"""P2: which text mentions the bot. Each rule is named after what it defends against."""

from __future__ import annotations

import pytest

from tusk.text.commands import is_go_away
from tusk.text.mentions import (
    Author,
    author_may_trigger,
    bot_mentions,
    mentions_bot,
    prose,
)

BOT = "tusk-bot"


@pytest.mark.parametrize(
    "body",
    [
        "@tusk-bot please fix the typo",
        "Hey @tusk-bot, can you look?",
        "@TUSK-BOT fix it",
        "cc @Tusk-Bot.",
        "(@tusk-bot)",
        "thanks @tusk-bot!",
        "> quoted line\n\n@tusk-bot after the quote",
        "```\ncode\n```\n@tusk-bot after the fence",
        "`code` and @tusk-bot",
        "@tusk-bot's turn",
        "- [ ] @tusk-bot do this",
        "@tusk-bot[bot] fix it",  # GitHub ends a login at "[": this notifies tusk-bot
    ],
)
def test_prose_mention_triggers(body: str) -> None:
    assert mentions_bot(body, BOT)


def test_mention_inside_fenced_code_block_does_not_trigger() -> None:
    assert not mentions_bot("Run this:\n```sh\n@tusk-bot fix\n```\n", BOT)
    assert not mentions_bot("~~~\n@tusk-bot\n~~~", BOT)


def test_mention_inside_unclosed_fence_does_not_trigger() -> None:
    assert not mentions_bot("```\n@tusk-bot fix it\nno closing fence", BOT)


def test_mention_inside_indented_code_does_not_trigger() -> None:
    assert not mentions_bot("Example:\n\n    @tusk-bot fix\n", BOT)


def test_mention_inside_inline_code_does_not_trigger() -> None:
    assert not mentions_bot("write `@tusk-bot fix it` to ask the bot", BOT)
    assert not mentions_bot("double ``a ` @tusk-bot`` span", BOT)


def test_mention_inside_quote_does_not_trigger() -> None:
    assert not mentions_bot("> @tusk-bot fix it\n\nI agree with the above", BOT)
    assert not mentions_bot("   > nested > @tusk-bot", BOT)


def test_lazy_continuation_of_a_quote_does_not_trigger() -> None:
    assert not mentions_bot("> someone wrote\n@tusk-bot in the same paragraph\n", BOT)


def test_mention_inside_html_comment_does_not_trigger() -> None:
    assert not mentions_bot("visible <!-- @tusk-bot hidden --> text", BOT)


def test_email_address_does_not_trigger() -> None:
    assert not mentions_bot("mail ops@tusk-bot.dev or me@tusk-bot", BOT)


def test_longer_login_does_not_trigger() -> None:
    assert not mentions_bot("@tusk-bot-helper and @tusk-bots and @tusk-bot_x", BOT)
    assert not mentions_bot("@xtusk-bot", BOT)


def test_team_or_url_does_not_trigger() -> None:
    assert not mentions_bot("@tusk-bot/reviewers and https://example.com/@tusk-bot", BOT)


def test_each_prose_mention_is_found() -> None:
    body = "@tusk-bot one `@tusk-bot` two @tusk-bot three"
    # What follows each on its line, code left out (as GitHub shows it, code cannot link).
    assert [m.after for m in bot_mentions(body, BOT)] == [" one  two @tusk-bot three", " three"]


def test_prose_keeps_offsets_and_blanks_code() -> None:
    body = "a `b` c\n```\nx\n```\nd"
    cleaned = prose(body)
    assert len(cleaned) == len(body)
    assert cleaned.split("\n")[0] == "a     c"
    assert cleaned.split("\n")[-1] == "d"


# Where a line-by-line reading of markdown and CommonMark (GFM) disagree, GitHub
# follows CommonMark: each case cites the rule.


@pytest.mark.parametrize(
    "body",
    [
        # A list item may open with a fenced code block (spec 5.2, list items).
        "- ```\n  @tusk-bot fix\n  ```",
        # A code span may run over a line ending (spec 6.1, code spans).
        "`run\n@tusk-bot fix`",
    ],
)
def test_code_the_way_commonmark_reads_it_does_not_trigger(body: str) -> None:
    assert not mentions_bot(body, BOT)


@pytest.mark.parametrize(
    "body",
    [
        # The backtick opening the second line closes the span the first opened.
        "`run\nthis` @tusk-bot fix `it`",
        # Only a paragraph continues lazily (spec 5.1): the fence's quote ends here.
        "> ```\n> code\n@tusk-bot fix",
        # Four spaces inside a "1. " item are the item's paragraph, not code (spec 5.2).
        "1. first\n\n    @tusk-bot fix",
        # A table row splits into cells before code spans are found (GFM 4.10).
        "| `x | @tusk-bot fix ` |\n| --- | --- |",
    ],
)
def test_prose_the_way_commonmark_reads_it_triggers(body: str) -> None:
    assert mentions_bot(body, BOT)


def test_mentions_skip_code_in_table_cells_and_image_text() -> None:
    row = "| `a` | @tusk-bot `a @tusk-bot b` |\n|---|---|"
    assert len(bot_mentions(row, BOT)) == 1
    image = "`x` ![`a @tusk-bot b`](x) and @tusk-bot\r\n`a @tusk-bot b` @tusk-bot"
    assert len(bot_mentions(image, BOT)) == 2


def test_bot_own_text_never_triggers() -> None:
    assert not author_may_trigger(Author("Tusk-Bot"), bot=BOT, allow_bot_accounts=True)


def test_bot_account_does_not_trigger_unless_configured() -> None:
    renovate = Author("renovate[bot]", is_bot_account=True)
    assert not author_may_trigger(renovate, bot=BOT, allow_bot_accounts=False)
    assert author_may_trigger(renovate, bot=BOT, allow_bot_accounts=True)
    assert author_may_trigger(Author("alice"), bot=BOT, allow_bot_accounts=False)


@pytest.mark.parametrize(
    "body",
    [
        "@tusk-bot go away",
        "@Tusk-Bot   Go away!",
        "please @tusk-bot go away, thanks",
        "@tusk-bot: go away",
    ],
)
def test_go_away_phrase_is_recognised(body: str) -> None:
    assert is_go_away(body, bot=BOT, phrase="go away")


@pytest.mark.parametrize(
    "body",
    [
        "@tusk-bot fix the go away button",
        "`@tusk-bot go away` removes the bot",
        "> @tusk-bot go away\n\nno, stay",
        "@tusk-bot go awayyy",
    ],
)
def test_go_away_needs_the_phrase_right_after_a_prose_mention(body: str) -> None:
    assert not is_go_away(body, bot=BOT, phrase="go away")


def test_go_away_phrase_is_configurable() -> None:
    assert is_go_away("@tusk-bot leave us", bot=BOT, phrase="leave us")
    assert not is_go_away("@tusk-bot go away", bot=BOT, phrase="leave us")


# GitHub links @login at the start of an HTML text node or after a non-word character
# ((?:^|\W)@login on text nodes outside pre, code and a). Emphasis markup ends a text node,
# so what matters is whether a "_" before "@" is markup (CommonMark 0.31.2, 6.2).
@pytest.mark.parametrize(
    ("body", "triggers"),
    [
        # The second "_" is right-flanking (after "a") and not left-flanking (punctuation
        # "@" follows, a letter precedes): it closes the opener, <em>a</em>@tusk-bot.
        ("_a_@tusk-bot fix it", True),
        ("__a__@tusk-bot fix it", True),  # the same with <strong>
        ("_@tusk-bot_ fix it", True),  # <em>@tusk-bot</em>: the opener ends a node too
        ("*a*@tusk-bot fix it", True),  # "*" is no word character anyway
        # No opener: the "_" is a literal word character in the same text node.
        ("snake_@tusk-bot fix it", False),
        ("a_@tusk-bot fix it", False),
        # Both flanking and between letters, the first "_" cannot open: no emphasis.
        ("foo_a_@tusk-bot fix it", False),
    ],
)
def test_a_mention_right_after_emphasis_triggers_as_github_links_it(
    body: str, triggers: bool
) -> None:
    assert mentions_bot(body, BOT) is triggers


def test_go_away_in_emphasis_is_still_go_away() -> None:
    assert is_go_away("@tusk-bot _go away_", bot=BOT, phrase="go away")


@pytest.mark.parametrize(
    "body", ["&#64;tusk-bot go away", "&commat;tusk-bot please go away", "@tusk-bot **go away**"]
)
def test_go_away_is_read_as_github_shows_it(body: str) -> None:
    """Whatever mentions the bot as GitHub renders it and says go away is a go-away, never
    a task: the trigger detector and the go-away grammar read the same text."""
    assert mentions_bot(body, BOT)
    assert is_go_away(body, bot=BOT, phrase="go away")


def test_a_quoted_go_away_is_still_no_go_away() -> None:
    assert not is_go_away("> &#64;tusk-bot go away\n\nno, stay", bot=BOT, phrase="go away")
