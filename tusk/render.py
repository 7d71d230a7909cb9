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
