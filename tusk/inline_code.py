"""Where markdown-it finds inline code spans, as offsets into the source text.

A code span may cross line endings inside its paragraph (CommonMark 0.31.2,
section 6.1 "Code spans"), so what is code can only be told per paragraph or
block, never per line. markdown-it decides it, but its inline tokens carry no
source offsets: the rules here note where each span lies in the inline content,
and ``code_spans`` maps that back to the source. Shared by the mention finder
(``tusk.mentions``) and the markdown neutraliser (``tusk.render``).
"""

from __future__ import annotations

from collections.abc import Iterator

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.rules_inline.backticks import backtick as _commonmark_backtick
from markdown_it.rules_inline.image import image as _commonmark_image
from markdown_it.token import Token


def parser(*, html: bool) -> MarkdownIt:
    """CommonMark with GFM tables, noting code span offsets.

    ``html=False`` also turns off autolinks: for text whose ``<`` is escaped
    before it is posted, where neither a tag nor an autolink can hide a backtick.
    """
    md = MarkdownIt("commonmark", {"html": html}).enable("table")
    if not html:
        md.disable("autolink")
    md.inline.ruler.at("backticks", _backtick)
    md.inline.ruler.at("image", _image)
    return md


def line_starts(text: str) -> list[int]:
    """Offset of each line's first character (lines end at ``\\n``), then ``len + 1``."""
    starts = [0] + [index + 1 for index, char in enumerate(text) if char == "\n"]
    starts.append(len(text) + 1)
    return starts


def code_spans(tokens: list[Token], text: str, starts: list[int]) -> Iterator[tuple[int, int]]:
    """[start, end) in ``text`` of every code span, backticks included.

    ``tokens`` come from ``parser()`` over ``text`` (or a text of the same length
    and backticks, lines ending at the same offsets ``starts``).

    Block parsing takes only markers, indentation and (in a table cell) the
    backslash of ``\\|`` from a line, never a backtick: the n-th backtick of an
    inline token's content is the n-th of its source lines (after those of the
    row's earlier cells, in a table).
    """
    ticks: dict[int, list[int]] = {}  # by first line: backticks no inline token took yet
    for token in tokens:
        if token.type != "inline" or token.map is None:
            continue
        first, last = token.map
        # The cells of a table row share its line and take its backticks in turn.
        source = ticks.setdefault(
            first, [i for i in range(starts[first], starts[last] - 1) if text[i] == "`"]
        )
        nth = {i: n for n, i in enumerate(i for i, c in enumerate(token.content) if c == "`")}
        for start, end in _spans(token.children or []):
            yield source[nth[start]], source[nth[end - 1]] + 1
        del source[: len(nth)]


def _spans(children: list[Token], base: int = 0) -> list[tuple[int, int]]:
    """[start, end) of each code span in an inline token's content, backticks included."""
    spans = []
    for child in children:
        if child.type == "code_inline":
            spans.append((base + child.meta["start"], base + child.meta["end"]))
        elif child.type == "image" and child.children:  # alt text, parsed on its own
            spans.extend(_spans(child.children, base + child.meta["alt_start"]))
    return spans


def _backtick(state: StateInline, silent: bool) -> bool:
    """markdown-it's code span rule, noting where the span lies in the inline content."""
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
