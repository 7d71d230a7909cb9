"""Does a piece of GitHub text @mention the bot? (MISSION P2)

Pure functions over markdown. A mention counts only where GitHub itself would
link it and a person meant it: whole word, case-insensitive, in prose. Text
inside fenced or indented code, inline code, block quotes (with their lazy
lines) and HTML comments is not prose; an e-mail address (``me@bot.dev``), a
longer login (``@bot-helper``) or a team (``@bot/team``) is not the bot. What
is code or quote is CommonMark's answer (markdown-it, with GFM tables), not a
guess by line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.rules_inline.backticks import backtick as _commonmark_backtick
from markdown_it.rules_inline.image import image as _commonmark_image
from markdown_it.token import Token

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
    starts = [0] + [index + 1 for index, char in enumerate(lines) if char == "\n"]
    starts.append(len(text) + 1)
    chars = list(text)

    def blank(start: int, end: int) -> None:
        chars[start:end] = _blank(text[start:end])

    ticks: dict[int, list[int]] = {}  # by first line: backticks no inline token took yet
    for token in _PARSER.parse(lines):
        if token.map is None:
            continue
        first, last = token.map
        if token.type in _NOT_PROSE:
            blank(starts[first], starts[last] - 1)
        elif token.type == "inline":
            # The cells of a table row share its line and take its backticks in turn.
            source = ticks.setdefault(
                first, [i for i in range(starts[first], starts[last] - 1) if text[i] == "`"]
            )
            nth = {i: n for n, i in enumerate(i for i, c in enumerate(token.content) if c == "`")}
            for start, end in _code_spans(token.children or []):
                blank(source[nth[start]], source[nth[end - 1]] + 1)
            del source[: len(nth)]
    return "".join(chars)


def _blank(text: str) -> str:
    return re.sub(r"[^\n]", " ", text)


def _code_spans(children: list[Token], base: int = 0) -> list[tuple[int, int]]:
    """[start, end) of each code span in an inline token's content, backticks included."""
    spans = []
    for child in children:
        if child.type == "code_inline":
            spans.append((base + child.meta["start"], base + child.meta["end"]))
        elif child.type == "image" and child.children:  # alt text, parsed on its own
            spans.extend(_code_spans(child.children, base + child.meta["alt_start"]))
    return spans


def _backtick(state: StateInline, silent: bool) -> bool:
    """markdown-it's code span rule, noting where the span lies in the inline content.

    Inline tokens carry no source offsets, but block parsing takes only markers,
    indentation and (in a table cell) the backslash of ``\\|`` from a line, never a
    backtick: the n-th backtick of an inline token's content is the n-th of its
    source lines (after those of the row's earlier cells, in a table).
    """
    start, count = state.pos, len(state.tokens)
    found = _commonmark_backtick(state, silent)
    if len(state.tokens) > count and state.tokens[-1].type == "code_inline":
        state.tokens[-1].meta.update(start=start, end=state.pos)
    return found


def _image(state: StateInline, silent: bool) -> bool:
    """markdown-it's image rule, noting where the alt text starts (after ``![``)."""
    start, count = state.pos, len(state.tokens)
    found = _commonmark_image(state, silent)
    if len(state.tokens) > count and state.tokens[-1].type == "image":
        state.tokens[-1].meta["alt_start"] = start + 2
    return found


_PARSER = MarkdownIt("commonmark").enable("table")
_PARSER.inline.ruler.at("backticks", _backtick)
_PARSER.inline.ruler.at("image", _image)


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
    """True when a prose mention is directly followed by the go-away phrase as whole words.

    "@bot go away", "@Bot   Go away!" and "@bot go away, please" all count:
    a request to leave must never become an agent task.
    """
    if not markdown:
        return False
    words = r"\s+".join(re.escape(word) for word in phrase.split())
    pattern = re.compile(r"^[\s:,]*" + words + r"(?![A-Za-z0-9_\-])", re.IGNORECASE)
    return any(pattern.match(after) for after in text_after_mentions(markdown, bot))


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
