"""Does a piece of GitHub text @mention the bot? (MISSION P2)

Pure functions over markdown. A mention counts only where GitHub itself would
link it and a person meant it: the ``TRIGGERS`` policy of ``tusk.text.markdown``,
read from cmark-gfm's rendering (whole login, case-insensitive, in prose; not in
code, quotes, links or HTML comments; not an e-mail address, a longer login or a
team). ``prose`` blanks what is not prose in the source itself, for readers that
need source offsets (the permission marker).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tusk.text.inline_code import code_spans, line_starts, parser, underscore_marks
from tusk.text.markdown import TRIGGERS, Mention, mentions_of

_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
# Blocks none of whose lines is prose: code, and quotes with their lazy lines.
_NOT_PROSE = frozenset({"fence", "code_block", "blockquote_open"})


def prose(markdown: str) -> str:
    """``markdown`` with everything that is not prose blanked out.

    Blanked, not removed: offsets and line breaks stay the same (``\\r\\n`` counts
    as one ``\\n``), and text on either side of a removed span cannot join into
    a new word.
    """
    text = _HTML_COMMENT.sub(lambda m: _blank(m.group(0)), markdown.replace("\r\n", "\n"))
    lines = text.replace("\r", "\n")  # markdown-it ends a line at a lone CR too
    starts = line_starts(lines)
    chars = list(text)

    def blank(start: int, end: int) -> None:
        chars[start:end] = _blank(text[start:end])

    tokens = _PARSER.parse(lines)
    for token in tokens:
        if token.type in _NOT_PROSE and token.map is not None:
            blank(starts[token.map[0]], starts[token.map[1]] - 1)
    for start, end in code_spans(tokens, lines, starts):
        blank(start, end)
    # Emphasis markup is no text: ``_a_@bot`` is ``<em>a</em>@bot``, where ``@bot``
    # starts a text node and GitHub links it; a literal ``_`` (``snake_@bot``) stays.
    for position in underscore_marks(tokens, lines, starts):
        chars[position] = " "
    return "".join(chars)


def _blank(text: str) -> str:
    return re.sub(r"[^\n]", " ", text)


_PARSER = parser(html=True)  # a tag or comment holds no code span, as GitHub renders it


def mention_pattern(bot: str) -> re.Pattern[str]:
    """A mention of ``bot`` in source text that ``prose`` cleaned (``markdown.TRIGGERS``)."""
    return TRIGGERS.pattern(bot)


def bot_mentions(markdown: str | None, bot: str) -> list[Mention]:
    """Each mention of ``bot`` that triggers it, in order (``markdown.TRIGGERS``)."""
    return mentions_of(markdown, bot, TRIGGERS)


def mentions_bot(markdown: str | None, bot: str) -> bool:
    return bool(bot_mentions(markdown, bot))


def text_after_mentions(markdown: str, bot: str) -> list[str]:
    """For each mention, the text GitHub shows after it up to the end of its line."""
    return [mention.after for mention in bot_mentions(markdown, bot)]


@dataclass(frozen=True)
class Author:
    login: str
    is_bot_account: bool = False


def author_may_trigger(author: Author, *, bot: str, allow_bot_accounts: bool) -> bool:
    """Never the bot's own text; accounts of type Bot only when configured."""
    if author.login.lower() == bot.lower():
        return False
    if author.is_bot_account or author.login.lower().endswith("[bot]"):
        return allow_bot_accounts
    return True
