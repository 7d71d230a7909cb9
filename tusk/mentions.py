"""Does a piece of GitHub text @mention the bot? (MISSION P2)

Pure functions over markdown. A mention counts only where GitHub itself would
link it and a person meant it: whole word, case-insensitive, in prose. Text
inside fenced or indented code, inline code, block quotes and HTML comments
is not prose; an e-mail address (``me@bot.dev``), a longer login
(``@bot-helper``) or a team (``@bot/team``) is not the bot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FENCE_OPEN = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_QUOTE = re.compile(r"^ {0,3}>")
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_BACKTICKS = re.compile(r"`+")
# Characters that may not touch a login on either side for it to be a mention:
# word characters and hyphens make a longer login or an e-mail address, ``/``
# a URL or a team, ``@`` and ``.``/``+`` the inside of an address.
_BEFORE = r"(?<![A-Za-z0-9_.+\-/@`])"
_AFTER = r"(?![A-Za-z0-9_\-/@`]|\.[A-Za-z0-9])"


def mention_pattern(bot: str) -> re.Pattern[str]:
    return re.compile(_BEFORE + "@" + re.escape(bot) + _AFTER, re.IGNORECASE)


def prose(markdown: str) -> str:
    """``markdown`` with everything that is not prose blanked out.

    Blanked, not removed: offsets stay the same, and text on either side of a
    removed span cannot join into a new word.
    """
    text = _HTML_COMMENT.sub(lambda m: _blank(m.group(0)), markdown.replace("\r\n", "\n"))
    lines = text.split("\n")
    out: list[str] = []
    fence: str | None = None
    in_quote = False
    previous_blank = True
    in_indented_code = False
    for line in lines:
        blank = not line.strip()
        if fence is not None:
            out.append(_blank(line))
            stripped = line.strip()
            if stripped.startswith(fence[0] * len(fence)) and not stripped.strip(fence[0]):
                fence = None
            previous_blank = False
            continue
        opened = _FENCE_OPEN.match(line)
        if opened and not (opened.group("fence")[0] == "`" and "`" in opened.group("info")):
            fence = opened.group("fence")
            out.append(_blank(line))
            in_quote = False
            previous_blank = False
            continue
        if _QUOTE.match(line):
            in_quote = True
        elif blank:
            in_quote = False
        # A non-blank line right after a quote line continues it (a "lazy" line).
        if in_quote:
            out.append(_blank(line))
            previous_blank = blank
            continue
        indented = line.startswith(("    ", "\t"))
        if indented and not blank and (previous_blank or in_indented_code):
            in_indented_code = True
            out.append(_blank(line))
            previous_blank = False
            continue
        if not blank:
            in_indented_code = False
        out.append(_strip_inline_code(line))
        previous_blank = blank
    return "\n".join(out)


def _blank(text: str) -> str:
    return re.sub(r"[^\n]", " ", text)


def _strip_inline_code(line: str) -> str:
    """Blank backtick code spans: a run of N backticks up to the next run of exactly N."""
    result = list(line)
    position = 0
    while True:
        opening = _BACKTICKS.search(line, position)
        if opening is None:
            break
        width = len(opening.group(0))
        closing = None
        for candidate in _BACKTICKS.finditer(line, opening.end()):
            if len(candidate.group(0)) == width:
                closing = candidate
                break
        if closing is None:
            position = opening.end()
            continue
        for index in range(opening.start(), closing.end()):
            result[index] = " "
        position = closing.end()
    return "".join(result)


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
