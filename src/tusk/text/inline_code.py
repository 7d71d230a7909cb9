"""Where markdown-it finds code and emphasis, as offsets into the source text.

A code span may cross line endings inside its paragraph (CommonMark 0.31.2,
section 6.1 "Code spans"), so what is code can only be told per paragraph or
block, never per line. markdown-it decides it, but its inline tokens carry no
source offsets: the rules here note where each span (and each emphasis
delimiter) lies in the inline content, and ``code_spans`` / ``underscore_marks``
map that back to the source. Shared by the mention finders (``tusk.text.mentions``,
the MCP server's policy) and the markdown neutraliser (``tusk.text.render``): one
definition of code for all of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import accumulate

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.rules_inline.backticks import backtick as _commonmark_backtick
from markdown_it.rules_inline.emphasis import tokenize as _commonmark_emphasis
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
    md.inline.ruler.at("emphasis", _emphasis)
    md.inline.ruler.at("image", _image)
    return md


def line_starts(text: str) -> list[int]:
    """Offset of each line's first character (lines end at ``\\n``), then ``len + 1``."""
    return [0, *accumulate(len(line) + 1 for line in text.split("\n"))]


def offsets_of(char: str, text: str, start: int, end: int) -> list[int]:
    """Every offset of ``char`` in ``text[start:end]``, as offsets into ``text``."""
    found = []
    at = text.find(char, start, end)
    while at >= 0:
        found.append(at)
        at = text.find(char, at + 1, end)
    return found


def code_spans(tokens: list[Token], text: str, starts: list[int]) -> Iterator[tuple[int, int]]:
    """[start, end) in ``text`` of every code span, backticks included.

    ``tokens`` come from ``parser()`` over ``text`` (or a text of the same length
    and backticks, lines ending at the same offsets ``starts``).
    """
    for token, source in _inline_tokens(tokens, text, starts, "`"):
        for start, end in _spans(token.children or []):
            yield source[start], source[end - 1] + 1


def code_blocks(tokens: list[Token], starts: list[int]) -> Iterator[tuple[int, int]]:
    """[start, end) of every fenced or indented code block's lines (fences and
    container markers included, the last line ending excluded)."""
    for token in tokens:
        if token.type in ("fence", "code_block") and token.map is not None:
            yield starts[token.map[0]], starts[token.map[1]] - 1


def underscore_marks(tokens: list[Token], text: str, starts: list[int]) -> Iterator[int]:
    """Offset in ``text`` of every ``_`` that is emphasis markup (``<em>``, ``<strong>``),
    not text (CommonMark 0.31.2, 6.2: whether a ``_`` run opens or closes depends on
    what flanks it and on the rest of the paragraph). Image alt text is skipped: it
    becomes an attribute, never text.

    GitHub finds mentions per HTML text node (``(?:^|\\W)@login``), so ``_a_@bob``
    (``<em>a</em>@bob``) mentions bob while ``snake_@bob`` does not.
    """
    for token, source in _inline_tokens(tokens, text, starts, "_"):
        for child in token.children or []:
            if "_" in child.markup and "delimiter" in child.meta:
                width, at = len(child.markup), child.meta["delimiter"]
                # markdown-it keeps the delimiter nearest the emphasised text as the tag.
                first = at if child.nesting < 0 else at - width + 1
                for position in range(first, first + width):
                    yield source[position]


def _inline_tokens(
    tokens: list[Token], text: str, starts: list[int], char: str
) -> Iterator[tuple[Token, dict[int, int]]]:
    """Each inline token with a map from the offset of each ``char`` in its content to
    that character's offset in ``text``.

    Block parsing takes only markers, indentation and (in a table cell) the
    backslash of ``\\|`` from a line, never a backtick or an underscore: the n-th
    ``char`` of an inline token's content is the n-th of its source lines (after
    those of the row's earlier cells, in a table).
    """
    left: dict[int, list[int]] = {}  # by first line: characters no inline token took yet
    for token in tokens:
        if token.type != "inline" or token.map is None:
            continue
        first, last = token.map
        # The cells of a table row share its line and take its characters in turn.
        source = left.setdefault(first, offsets_of(char, text, starts[first], starts[last] - 1))
        offsets = offsets_of(char, token.content, 0, len(token.content))
        yield token, dict(zip(offsets, source, strict=False))
        del source[: len(offsets)]


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


def _emphasis(state: StateInline, silent: bool) -> bool:
    """markdown-it's emphasis rule, noting where each delimiter lies in the inline
    content (its token becomes ``em_open``, ``strong_close``... or stays text)."""
    start = state.pos
    found = _commonmark_emphasis(state, silent)
    if found:  # one token per delimiter, the last ones pushed (text pending before comes first)
        run = state.pos - start
        for index, token in enumerate(state.tokens[len(state.tokens) - run :]):
            token.meta["delimiter"] = start + index
    return found


def _image(state: StateInline, silent: bool) -> bool:
    """markdown-it's image rule, noting where the alt text starts (after ``![``)."""
    start, count = state.pos, len(state.tokens)
    found = _commonmark_image(state, silent)
    if len(state.tokens) > count and state.tokens[-1].type == "image":
        state.tokens[-1].meta["alt_start"] = start + 2
    return found
