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
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

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
_LINE_BREAKS = re.compile(r"\r\n|\r|\n")
_HEADING = re.compile(r"^( {0,3})(#{1,6})(?=[ \t]|$)")
_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})")
# A setext underline or a thematic break: a line of only = - * _ (and spaces).
_RULE = re.compile(r"^( {0,3})([=\-*_])(?=[ \t=\-*_]*$)")
# A link reference definition is invisible and defines a link for the whole
# page; it may sit inside list items (any indent, nested markers), and its
# label may run onto the next line, so a "[" with no "]" on its line counts.
_LINK_DEFINITION = re.compile(r"^([ \t]*(?:(?:[-+*]|[0-9]{1,9}[.)])[ \t]+)*)\[(?=[^\]]*(?:\]:|$))")
_MENTION = re.compile(r"(?<![A-Za-z0-9`])@(?=[A-Za-z0-9])")
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


@cache
def _hidden_characters() -> re.Pattern[str]:
    """One character class of every hidden code point, built once per process."""
    ranges: list[tuple[int, int]] = []
    for code in range(sys.maxunicode + 1):
        if _is_hidden(chr(code)):
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1] = (ranges[-1][0], code)
            else:
                ranges.append((code, code))
    parts = "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
        for a, b in ranges
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
    from notifying people or cross-referencing issues from where it is posted.
    """
    out = []
    for raw in _LINE_BREAKS.split(text or ""):
        line = _inert_line(reveal_hidden(raw))
        if neutralise_mentions:
            line = _MENTION.sub("@" + _ZERO_WIDTH_SPACE, line)
            line = _ISSUE_REFERENCE.sub("#" + _ZERO_WIDTH_SPACE, line)
        out.append(f"> {line}" if line else ">")
    return "\n".join(out)


# --------------------------------------------------------------------------- markdown, kept


_QUOTE_PREFIX = re.compile(r"^(?:[ ]{0,3}>[ ]?)*")
_FENCE_OPEN = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})")
# A backslash before a backtick makes it literal: never count it as a delimiter (when in
# doubt the text is treated as prose, whose mentions get wrapped: the safe side).
_BACKTICKS = re.compile(r"(?<!\\)`+")
# What GitHub turns into a notification or a cross-reference when it stands in text
# (not in code): the URL of an issue, pull request or discussion, @user and
# @org/team, #12, owner/repo#12, GH-12. Wrapped in a code span they read the same and
# link nothing.
_LINKABLE = re.compile(
    r"https?://[^\s/<>]+/[\w.-]+/[\w.-]+/(?:issues|pull|discussions)/[0-9]+[^\s<>()\[\]`]*"
    r"|(?<![A-Za-z0-9_`/])@[A-Za-z0-9][A-Za-z0-9-]*(?:/[A-Za-z0-9][\w.-]*)?"
    r"|(?<![A-Za-z0-9_`&/])(?:[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)?#[0-9]+(?![\w])"
    r"|(?<![A-Za-z0-9_`])GH-[0-9]+(?![\w])"
)


def _may_link(text: str) -> bool:
    """Whether ``_LINKABLE`` could match: each of its forms needs one of these. Plain
    substring tests are far cheaper than the pattern's scan with its lookbehinds."""
    return "@" in text or "#" in text or "GH-" in text or "://" in text


def _code_spans(text: str) -> list[tuple[bool, str]]:
    """``text`` as (is_code, piece) pieces: a run of backticks opens a code span only
    when the same run closes it later on the line (CommonMark's rule, per line).

    By hand, per line: the caller rewrites line by line, and markdown-it's inline tokens
    carry no source offsets (``tusk.mentions`` recovers them, but for whole paragraphs).
    """
    pieces: list[tuple[bool, str]] = []
    start = position = 0
    while (opening := _BACKTICKS.search(text, position)) is not None:
        run = re.escape(opening.group(0))
        closing = re.compile(f"(?<![`\\\\]){run}(?!`)").search(text, opening.end())
        if closing is None:
            position = opening.end()
            continue
        pieces.append((False, text[start : opening.start()]))
        pieces.append((True, text[opening.start() : closing.end()]))
        start = position = closing.end()
    pieces.append((False, text[start:]))
    return [(code, piece) for code, piece in pieces if piece]


# A link's destination, `](url "title")`: kept as written so the link still works.
_LINK_DESTINATION = re.compile(
    r"\]\((?:<[^<>\n]*>|[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\)"
)


def _neutral_text(text: str) -> str:
    """Prose outside code: mentions and references in code spans, HTML and entities
    escaped (so no tag hides anything and ``&#64;`` cannot spell a mention); link
    destinations kept."""
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
    for match in _LINKABLE.finditer(text):
        plain = text[position : match.start()]
        out.append(plain.replace("&", "&amp;").replace("<", "&lt;"))
        out.append(f"`{match.group(0)}`")
        position = match.end()
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
    out: list[str] = []
    fence: tuple[int, str, int] | None = None  # quote depth, marker character, length
    for raw in _LINE_BREAKS.split(text or ""):
        if fence is None and _plain(raw[_QUOTE_PREFIX.match(raw).end() :]):  # type: ignore[union-attr]
            out.append(raw)  # quote markers and plain text: nothing below would change it
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
            out.append(line)
            continue
        opening = _FENCE_OPEN.match(body)
        if opening is not None and not (
            opening.group(1)[0] == "`" and "`" in body[opening.end() :]
        ):
            fence = (depth, opening.group(1)[0], len(opening.group(1)))
            out.append(line)
            continue
        body = _LINK_DEFINITION.sub(
            lambda m: m.group(1) + "\\" + m.group(0)[len(m.group(1)) :], body
        )
        body = "".join(piece if code else _neutral_text(piece) for code, piece in _code_spans(body))
        out.append(prefix + body)
    return out


def quote_markdown(text: str | None) -> str:
    """``text`` as one blockquote that keeps its markdown but acts on nothing
    (``neutral_markdown_lines``); every line is quoted, blank ones as ``>``."""
    return "\n".join(f"> {line}" if line else ">" for line in neutral_markdown_lines(text))


def code_span(text: str) -> str:
    """``text`` as one inline code span, whatever backticks it holds (on one line)."""
    text = " ".join(reveal_hidden(text).split())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def neutral_line(text: str | None) -> str:
    """One line of text from GitHub, safe to post as prose (see ``neutral_markdown_lines``)."""
    return " ".join(neutral_markdown_lines(" ".join((text or "").split())))
