"""Does a piece of GitHub text @mention the bot? (MISSION P2)

Pure functions over markdown. A mention counts only where GitHub itself would
link it and a person meant it: whole word, case-insensitive, in prose. Text
inside fenced or indented code, inline code, block quotes (with their lazy
lines) and HTML comments is not prose; an e-mail address (``me@bot.dev``), a
longer login (``@bot-helper``) or a team (``@bot/team``) is not the bot. What
is code or quote is CommonMark's answer (markdown-it, with GFM tables), not a
guess by line; so is which ``_`` is emphasis markup rather than a word character.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tusk.text.inline_code import code_spans, line_starts, parser, underscore_marks

_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
# Characters that may not touch a login on either side for it to be a mention:
# word characters and hyphens make a longer login or an e-mail address, ``/``
# a URL or a team, ``@`` and ``.``/``+`` the inside of an address.
_BEFORE = r"(?<![A-Za-z0-9_.+\-/@`])"
_AFTER = r"(?![A-Za-z0-9_\-/@`]|\.[A-Za-z0-9])"
# Blocks none of whose lines is prose: code, and quotes with their lazy lines.
_NOT_PROSE = frozenset({"fence", "code_block", "blockquote_open"})


def mention_pattern(bot: str) -> re.Pattern[str]:
    return re.compile(_BEFORE + "@" + re.escape(bot) + _AFTER, re.IGNORECASE)


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


def mention_offsets(markdown: str | None, bot: str) -> list[int]:
    """Offsets of every prose @mention of ``bot`` in ``markdown``."""
    if not markdown:
        return []
    return [match.start() for match in mention_pattern(bot).finditer(prose(markdown))]


def mentions_bot(markdown: str | None, bot: str) -> bool:
    return bool(mention_offsets(markdown, bot))


def text_after_mentions(markdown: str, bot: str) -> list[str]:
    """For each prose mention, the prose that follows it up to the end of its line."""
    cleaned = prose(markdown)
    found = []
    for match in mention_pattern(bot).finditer(cleaned):
        end = cleaned.find("\n", match.end())
        found.append(cleaned[match.end() : end if end != -1 else len(cleaned)])
    return found


def is_go_away(markdown: str | None, *, bot: str, phrase: str) -> bool:
    """True when ``markdown`` asks the bot to go away: the bot-command grammar of
    ``tusk.text.commands`` ("@bot go away", "@bot, please go away", "go away @bot")."""
    from tusk.text.commands import asks_to_leave  # it builds on this module

    return asks_to_leave(markdown, bot=bot, phrase=phrase)


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
