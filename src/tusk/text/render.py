"""One Jinja environment for every markdown Tusk writes (log issue, summary, transcript).

Templates live in the ``tusk.templates`` package and are loaded through the
package loader, so rendering works the same from a checkout and from an
installed wheel. ``StrictUndefined`` turns a misspelt variable into an error
instead of an empty string; autoescape is off because the output is markdown,
not HTML: untrusted text goes through ``quote_block`` instead.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from bisect import bisect_right
from functools import cache
from itertools import accumulate
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from tusk.text import inline_code, markdown

TEMPLATE_PACKAGE = "tusk.templates"


@cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader(TEMPLATE_PACKAGE, ""),
        undefined=StrictUndefined,
        autoescape=False,
        trim_blocks=True,  # a `{% ... %}` line leaves no blank line behind
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["quote_block"] = quote_block
    env.filters["quote_markdown"] = quote_markdown
    env.filters["code_span"] = code_span
    env.filters["neutral_line"] = neutral_line
    return env


def render(template_name: str, **context: Any) -> str:
    """Render ``templates/<template_name>`` with ``context`` (typed models, not raw payloads)."""
    return environment().get_template(template_name).render(**context)


# --------------------------------------------------------------------------- quoting

# Characters that are invisible or reorder text: zero-width, bidi controls,
# variation selectors, tag characters. Shown as [U+XXXX] so nothing hides.
_VARIATION_SELECTORS = (range(0xFE00, 0xFE10), range(0xE0100, 0xE01F0))
_LINE_BREAKS = re.compile(r"\r\n|\r|\n")  # as markdown-it ends a line
_HEADING = re.compile(r"^( {0,3})(#{1,6})(?=[ \t]|$)")
_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})")
# A setext underline or a thematic break: a line of only = - * _ (and spaces).
_RULE = re.compile(r"^( {0,3})([=\-*_])(?=[ \t=\-*_]*$)")
# A link reference definition is invisible and defines a link for the whole
# page; it may sit inside list items (any indent, nested markers), and its
# label may run onto the next line, so a "[" with no "]" on its line counts.
_LINK_DEFINITION = re.compile(r"^([ \t]*(?:(?:[-+*]|[0-9]{1,9}[.)])[ \t]+)*)\[(?=[^\]]*(?:\]:|$))")
# A mention (``tusk.text.markdown``), unless a backtick opens a code span right before it.
_MENTION = re.compile(r"(?<!`)" + markdown.MENTION_START)
_ISSUE_REFERENCE = re.compile(r"(?<!&)#(?=[0-9])")
_ZERO_WIDTH_SPACE = "&#8203;"


def _is_hidden(char: str) -> bool:
    code = ord(char)
    if char in "\n\t":
        return False
    if unicodedata.category(char) in ("Cf", "Cc", "Zl", "Zp"):
        return True
    return any(code in block for block in _VARIATION_SELECTORS)


_ASCII_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


# The ranges ``_is_hidden`` finds, by Unicode version: scanning all 1.1 million code
# points costs half a second, which every process would pay on its first non-ASCII
# text. A version not listed here is scanned (and a test checks the table against
# the scan of the running Python's version).
_HIDDEN_RANGES_BEFORE = ((0x00, 0x08), (0x0B, 0x1F), (0x7F, 0x9F), (0xAD, 0xAD))
_HIDDEN_RANGES_COMMON = (
    (0x600, 0x605), (0x61C, 0x61C), (0x6DD, 0x6DD), (0x70F, 0x70F), (0x890, 0x891),
    (0x8E2, 0x8E2), (0x180E, 0x180E), (0x200B, 0x200F), (0x2028, 0x202E), (0x2060, 0x2064),
    (0x2066, 0x206F), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
)  # fmt: skip
_HIDDEN_RANGES_AFTER = (
    (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0001, 0xE0001), (0xE0020, 0xE007F),
    (0xE0100, 0xE01EF),
)  # fmt: skip
_HIDDEN_RANGES_BY_VERSION = {
    # Egyptian hieroglyph format controls: U+13430-13438 in Unicode 14, to U+1343F in 15.
    version: (
        *_HIDDEN_RANGES_BEFORE,
        *_HIDDEN_RANGES_COMMON,
        (0x13430, last),
        *_HIDDEN_RANGES_AFTER,
    )
    for version, last in (("14.0.0", 0x13438), ("15.0.0", 0x1343F), ("15.1.0", 0x1343F))
}


def _scan_hidden() -> tuple[tuple[int, int], ...]:
    """Every run of code points ``_is_hidden`` finds, as inclusive (first, last) pairs."""
    ranges: list[tuple[int, int]] = []
    for code in range(sys.maxunicode + 1):
        if _is_hidden(chr(code)):
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1] = (ranges[-1][0], code)
            else:
                ranges.append((code, code))
    return tuple(ranges)


def hidden_ranges() -> tuple[tuple[int, int], ...]:
    """The hidden code points of this Python's Unicode version (``_is_hidden``)."""
    known = _HIDDEN_RANGES_BY_VERSION.get(unicodedata.unidata_version)
    return known if known is not None else _scan_hidden()


@cache
def _hidden_characters() -> re.Pattern[str]:
    """One character class of every hidden code point, built once per process."""
    parts = "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
        for a, b in hidden_ranges()
    )
    return re.compile(f"[{parts}]")


def _visible(match: re.Match[str]) -> str:
    return f"[U+{ord(match.group(0)):04X}]"


def reveal_hidden(text: str) -> str:
    """Replace invisible and direction-changing characters by a visible ``[U+XXXX]``."""
    if text.isascii():  # the common case: only control characters can hide here
        return _ASCII_CONTROLS.sub(_visible, text)
    return _hidden_characters().sub(_visible, text)


def _inert_line(line: str) -> str:
    # HTML first: with '&', '<' and '>' escaped no tag, comment (`-->`), entity
    # or nested quote can exist, so `</details>` or `<!--` stay literal text.
    line = line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    for pattern in (_HEADING, _FENCE, _RULE, _LINK_DEFINITION):
        line = pattern.sub(lambda m: m.group(1) + "\\" + m.group(0)[len(m.group(1)) :], line)
    return line


def quote_block(text: str | None, *, neutralise_mentions: bool = True) -> str:
    """Quote untrusted ``text`` so it stays one inert markdown blockquote.

    Every line gets a "> " prefix (an empty line becomes ">", which keeps the
    quote going). Inside it nothing can end the quote or change the page:
    HTML tags and comments, entities, fences, headings, rules, setext
    underlines and link definitions are escaped; invisible and bidi
    characters are shown as ``[U+XXXX]``. With ``neutralise_mentions`` a
    zero-width space after ``@`` and ``#`` keeps quoted ``@user`` and ``#12``
    from notifying people or cross-referencing issues from where it is posted;
    the result is checked on its rendering (``tusk.text.markdown``), and where a
    mention would still notify (a backtick that opens no code span before it),
    every ``@`` is broken, in code spans too.
    """
    quoted = _quote_lines(text, _MENTION if neutralise_mentions else None)
    if neutralise_mentions and markdown.mentioned_logins(quoted):
        quoted = _quote_lines(text, _EVERY_MENTION)
    return quoted


# Every "@" before a login, a backtick before it or not: the fallback when a rendering shows
# that a code span was not where the backtick suggested.
_EVERY_MENTION = re.compile(markdown.MENTION_START)


def _quote_lines(text: str | None, mention: re.Pattern[str] | None) -> str:
    out = []
    for raw in _LINE_BREAKS.split(text or ""):
        line = _inert_line(reveal_hidden(raw))
        if mention is not None:
            line = mention.sub("@" + _ZERO_WIDTH_SPACE, line)
            line = _ISSUE_REFERENCE.sub("#" + _ZERO_WIDTH_SPACE, line)
        out.append(f"> {line}" if line else ">")
    return "\n".join(out)


# --------------------------------------------------------------------------- markdown, kept


_QUOTE_PREFIX = re.compile(r"^(?:[ ]{0,3}>[ ]?)*")
_FENCE_OPEN = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})")
# A backtick outside code with no backslash escaping it (none, or an even run before it).
_BARE_BACKTICK = re.compile(r"(?<!\\)((?:\\\\)*)`")
# A run of backslashes just before a match: an odd run escapes the match's first character.
_TRAILING_BACKSLASHES = re.compile(r"\\+\Z")
# What GitHub turns into a notification or a cross-reference when it stands in text
# (not in code): the URL of an issue, pull request or discussion, @user and
# @org/team, #12, owner/repo#12, GH-12. Wrapped in a code span they read the same and
# link nothing. A ``_`` before one does not protect it: as emphasis markup it ends a
# text node (``_a_@bob`` is ``<em>a</em>@bob``, and GitHub links ``@bob``; ``_a_#12``
# likewise); wrapping a literal one (``snake_@bob``) as well costs nothing. Nor does a
# ``/`` before ``@``: GitHub's mention filter takes any non-word character there.
_LINKABLE = re.compile(
    r"https?://[^\s/<>]+/[\w.-]+/[\w.-]+/(?:issues|pull|discussions)/[0-9]+[^\s<>()\[\]`\\]*"
    + "|"
    + markdown.NOTIFIES.expression()
    + r"|(?<![A-Za-z0-9&/])(?:[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)?#[0-9]+(?![\w])"
    r"|(?<![A-Za-z0-9])GH-[0-9]+(?![\w])"
)


def _may_link(text: str) -> bool:
    """Whether ``_LINKABLE`` could match: each of its forms needs one of these. Plain
    substring tests are far cheaper than the pattern's scan with its lookbehinds."""
    return "@" in text or "#" in text or "GH-" in text or "://" in text


_PARSER = inline_code.parser(html=False)


def _code_ranges(lines: list[str], starts: list[int], fenced: list[bool]) -> list[tuple[int, int]]:
    """[start, end) of every code span in the text of ``lines`` (joined by ``\n``; line
    ``i`` starts at ``starts[i]``), as CommonMark reads it: a span may cross line endings
    within its paragraph (section 6.1).

    Parsed without HTML and autolinks: the posted text has every ``<`` outside code
    escaped, so no tag or autolink can hide a backtick there. Only the blocks holding a
    backtick are parsed, each on its own (``_top_level_blocks``)."""
    source = "\n".join(lines)
    if "`" not in source:
        return []
    spans: list[tuple[int, int]] = []
    for first, last in _top_level_blocks(lines, fenced):
        start, end = starts[first], starts[last] - 1
        if source.find("`", start, end) < 0:
            continue
        block = source[start:end]
        tokens = _PARSER.parse(block)
        found = inline_code.code_spans(tokens, block, inline_code.line_starts(block))
        spans.extend((a + start, b + start) for a, b in found)
    return sorted(spans)


_TABBED_FENCE = re.compile(r"^[ >]*\t[ \t>]*(?:```|~~~)")


def _top_level_blocks(lines: list[str], fenced: list[bool]) -> list[tuple[int, int]]:
    """``lines`` cut into runs [first, last) at each empty line followed by a line that
    starts in column 0 (neither of them fenced code): no block holds such a line but one
    it opens itself (a blank line ends a paragraph, a quote, a table and an indented
    code block, and an unindented line ends a list item), so what is code in a run
    does not depend on the lines before or after it."""
    runs: list[tuple[int, int]] = []
    if any("\t" in line and _TABBED_FENCE.match(line) for line in lines):
        # Whether a tab-indented fence closes one is told by columns (``_fenced`` does
        # not count them): left to markdown-it, over the whole text.
        return [(0, len(lines))]
    first = 0
    for index in range(1, len(lines) - 1):
        if (
            not lines[index]
            and lines[index + 1][:1] not in ("", " ", "\t")
            and not fenced[index]
            and not fenced[index + 1]
        ):
            runs.append((first, index))
            first = index + 1
    runs.append((first, len(lines)))
    return runs


def _pieces(line: str, start: int, spans: list[tuple[int, int]]) -> list[tuple[bool, str]]:
    """``line``, which starts at offset ``start`` of the text, as (is_code, piece) pieces."""
    end = start + len(line)
    pieces: list[tuple[bool, str]] = []
    position = start
    for span_start, span_end in spans:
        if span_end <= position or span_start >= end:
            continue
        if span_start > position:
            pieces.append((False, line[position - start : span_start - start]))
        position = min(span_end, end)
        pieces.append((True, line[max(span_start, start) - start : position - start]))
    pieces.append((False, line[position - start :]))
    return [(code, piece) for code, piece in pieces if piece]


# A link's destination, `](url "title")`: kept as written so the link still works.
_LINK_DESTINATION = re.compile(
    r"\]\((?:<[^<>\n]*>|[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\)"
)


def _neutral_text(text: str) -> str:
    """Prose outside code: mentions and references in code spans, HTML and entities
    escaped (so no tag hides anything and ``&#64;`` cannot spell a mention); link
    destinations kept.

    A backtick here is literal (markdown-it found it opens no code span), and gets a
    backslash so that it stays literal next to the code spans added around mentions:
    a lone backtick before ``@bob`` would otherwise pair with the added opening one
    and leave ``@bob`` live (CommonMark 0.31.2, 6.1: a backtick string closes the
    first open one of its length). A backslash-escaped backtick is the same character, in a link
    destination too (section 2.4)."""
    if "`" in text:
        text = _BARE_BACKTICK.sub(r"\1\\`", text)
    if "](" not in text:  # no link destination to keep
        return _neutral_prose(text)
    out = []
    position = 0
    for destination in _LINK_DESTINATION.finditer(text):
        out.append(_neutral_prose(text[position : destination.start()]))
        out.append(destination.group(0))
        position = destination.end()
    out.append(_neutral_prose(text[position:]))
    return "".join(out)


def _neutral_prose(text: str) -> str:
    if not _may_link(text):  # most prose: nothing to wrap, only & and < to escape
        return text.replace("&", "&amp;").replace("<", "&lt;")
    out = []
    position = 0
    # Searched afresh after each match: text right after an added code span starts a new
    # text node, where GitHub links ``@bob`` even after a letter (``@a@bob``).
    while (match := _LINKABLE.search(text[position:])) is not None:
        plain = text[position : position + match.start()]
        backslashes = _TRAILING_BACKSLASHES.search(plain)
        if backslashes is not None and len(backslashes.group(0)) % 2:
            # It would escape the opening backtick. Before ``@`` or ``#`` it escapes
            # nothing visible: drop it; before a letter it shows: escape it instead.
            plain = plain[:-1] if match.group(0)[0] in "@#" else plain + "\\"
        # The text before an added span ends a text node too (``#12`` before a URL).
        out.append(_neutral_prose(plain) if plain else "")
        out.append(f"`{match.group(0)}`")
        position += match.end()
    out.append(text[position:].replace("&", "&amp;").replace("<", "&lt;"))
    return "".join(out)


# Printable ASCII and tab without the characters any rule below reacts to: quote
# markers, fences, code spans, links, HTML and entities, mentions and references.
_PLAIN_LINE = re.compile(
    "[\t"
    + re.escape("".join(chr(c) for c in range(0x20, 0x7F) if chr(c) not in "&<>@#[]`~"))
    + "]*"
)


def _plain(line: str) -> bool:
    """A line ``neutral_markdown_lines`` leaves as it is, outside a fence: nothing hidden
    to reveal, nothing to escape or wrap (``GH-12`` and URLs need their own test, being
    made of plain characters)."""
    return _PLAIN_LINE.fullmatch(line) is not None and "GH-" not in line and "://" not in line


def neutral_markdown_lines(text: str | None) -> list[str]:
    """Markdown from GitHub made safe to post while it still reads as markdown.

    Headings, lists, quotes, emphasis, links and code render as written. What
    would act on GitHub does not: ``@user``, ``#12`` and ``owner/repo#12`` outside
    code become code spans (no notification, no cross-reference), raw HTML and
    entities are escaped (no hidden ``<details>``, no ``&#64;`` mention), link
    reference definitions are shown, and invisible or bidi characters appear as
    ``[U+XXXX]``. Code spans and fenced blocks are left exactly as written: GitHub
    links nothing there. One output line per input line.
    """
    lines = _LINE_BREAKS.split(text or "")
    starts = [0, *accumulate(len(line) + 1 for line in lines)]
    fenced = _fenced(lines)
    spans = [
        (start, end)
        for start, end in _code_ranges(lines, starts, fenced)
        # A span markdown-it saw running into a line kept as fenced code would not close
        # where it is posted: its other part is treated as text, the safe side.
        if not any(fenced[bisect_right(starts, start) - 1 : bisect_right(starts, end - 1)])
    ]
    by_line: dict[int, list[tuple[int, int]]] = {}  # the spans touching each line
    for start, end in spans:
        for line in range(bisect_right(starts, start) - 1, bisect_right(starts, end - 1)):
            by_line.setdefault(line, []).append((start, end))
    # A line no span touches comes out the same wherever it stands: made once per text
    # (the headings and flag lines of a context repeat).
    done: dict[str, str] = {}
    out: list[str] = []
    for index, raw in enumerate(lines):
        prefix = _QUOTE_PREFIX.match(raw).group(0)  # type: ignore[union-attr]
        body = raw[len(prefix) :]
        if fenced[index]:
            out.append(reveal_hidden(raw))
        elif _plain(body):
            out.append(raw)  # quote markers and plain text: nothing below would change it
        elif index in by_line:
            out.append(prefix + _neutral_body(body, starts[index] + len(prefix), by_line[index]))
        else:
            if body not in done:
                done[body] = _neutral_body(body, 0, [])
            out.append(prefix + done[body])
    return out


def _fenced(lines: list[str]) -> list[bool]:
    """Which lines are a fenced code block's, its fences included: kept as written."""
    fenced: list[bool] = []
    fence: tuple[int, str, int] | None = None  # quote depth, marker character, length
    for raw in lines:
        if fence is None and "`" not in raw and "~" not in raw:
            fenced.append(False)  # opens no fence
            continue
        line = reveal_hidden(raw)
        prefix = _QUOTE_PREFIX.match(line).group(0)  # type: ignore[union-attr]
        depth = prefix.count(">")
        body = line[len(prefix) :]
        if fence is not None and depth < fence[0]:
            fence = None  # the quote holding the fence ended, and the fence with it
        if fence is not None:
            stripped = body.strip()
            if (
                len(stripped) >= fence[2]
                and set(stripped) == {fence[1]}
                and not body.startswith("    ")
            ):
                fence = None
            fenced.append(True)
            continue
        opening = _FENCE_OPEN.match(body)
        if opening is not None and not (
            opening.group(1)[0] == "`" and "`" in body[opening.end() :]
        ):
            fence = (depth, opening.group(1)[0], len(opening.group(1)))
        fenced.append(fence is not None)
    return fenced


def _neutral_body(body: str, start: int, spans: list[tuple[int, int]]) -> str:
    """A line's text after its quote markers, which starts at ``start`` of the text:
    code kept, the rest neutral, a line that may define a link shown as text."""
    out: list[str] = []
    wrapped_last = False  # the text so far ends with a code span added around a mention
    for index, (code, piece) in enumerate(_pieces(body, start, spans)):
        if code:
            text = reveal_hidden(piece)
            touching = wrapped_last
        else:
            if index == 0:
                piece = _LINK_DEFINITION.sub(
                    lambda m: m.group(1) + "\\" + m.group(0)[len(m.group(1)) :], piece
                )
            text = _neutral_text(reveal_hidden(piece))
            # Literal backticks come out escaped: a bare one at either end is an added span's.
            touching = index > 0 and text.startswith("`")
            wrapped_last = text.endswith("`") and not piece.endswith("`")
        # Backtick strings that touch merge into a longer one and no longer close the
        # span they belong to (CommonMark 0.31.2, 6.1): a space keeps them apart.
        out.append(" " + text if touching else text)
    return "".join(out)


def quote_markdown(text: str | None) -> str:
    """``text`` as one blockquote that keeps its markdown but acts on nothing
    (``neutral_markdown_lines``); every line is quoted, blank ones as ``>``. Where its
    rendering would still notify someone, ``quote_block`` (inert text) instead."""
    quoted = "\n".join(f"> {line}" if line else ">" for line in neutral_markdown_lines(text))
    return quote_block(text) if markdown.mentioned_logins(quoted) else quoted


def code_span(text: str) -> str:
    """``text`` as one inline code span, whatever backticks it holds (on one line)."""
    text = " ".join(reveal_hidden(text).split())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def neutral_line(text: str | None) -> str:
    """One line of text from GitHub, safe to post as prose (see ``neutral_markdown_lines``);
    as inert text where its rendering would still notify someone."""
    line = " ".join(neutral_markdown_lines(" ".join((text or "").split())))
    if not markdown.mentioned_logins(line):
        return line
    return quote_block(" ".join((text or "").split())).removeprefix("> ")
