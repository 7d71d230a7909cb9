"""build-context's sizes: what an item costs in context.md, exactly and as lower bounds.

``view_size`` is the exact count of the template's ``item`` macro; the floors
are cheap lower bounds that let the 3:1 walk pass over a comment that cannot
fit without building it. Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tusk.contracts.raw_context import Comment
from tusk.steps.build_context.items import safe_url
from tusk.steps.build_context.views import ItemView
from tusk.text.neutralise import UNTRUSTED_FLAG, Trust, neutralise

# A rough cost of one item's heading on top of its text, for counting what is left out.
ITEM_OVERHEAD = 160


def item_size(text: str | None) -> int:
    """A cheap estimate: the raw text plus a heading. Used to count what is left out."""
    return len(text or "") + ITEM_OVERHEAD


def view_size(item: ItemView) -> int:
    """The characters ``item`` adds to context.md (the template's ``item`` macro): its
    heading, one line per flag, and its text with "> " before every line. The budget
    is spent in these, so many short lines or flagged authors cannot overrun it."""
    heading = _heading_size(item.kind, item.author, item.when, item.url)
    if item.detail:
        heading += len(item.detail) + 3
    if item.is_trigger:
        heading += 48
    return heading + _flags_size(item.flags) + _text_size(item.text)


def _heading_size(kind: str, author: str, when: str, url: str | None) -> int:
    return len(f"#### {kind} by @{author} · {when}") + 3 + (len(url) + 11 if url else 0)


def _flags_size(flags: Sequence[str]) -> int:
    return sum(len(flag) + 5 for flag in flags) + (1 if flags else 0)


def _text_size(text: str) -> int:
    text = text or "(empty)"
    return len(text) + 2 * (text.count("\n") + 1) + 2


# The shortest time ``fmt_time`` writes.
SHORTEST_WHEN = "unknown time"
# What every comment's heading costs whoever wrote it, whatever its link.
COMMENT_HEADING_FLOOR = _heading_size("comment", "", SHORTEST_WHEN, None)


def text_floor(body: str, *, exact_html: bool = False) -> int:
    """A lower bound of ``_text_size`` of ``body`` once sanitised, without sanitising it.

    Sanitising drops carriage returns, lengthens every other hidden character and
    keeps every line break; only HTML comments remove text. A text that holds one
    (once its carriage returns are gone) counts nothing, unless ``exact_html``
    asks to sanitise it and measure.
    """
    if "\r" in body:
        body = body.replace("\r", "")
    if "<!--" in body:
        return _text_size(neutralise(body).text) if exact_html else 0
    return _text_size(body)


def text_floors(bodies: Sequence[str]) -> list[int]:
    """``text_floor`` of each body, looser and at a fraction of the cost: a text with
    neither a carriage return nor a "<" (no HTML comment then) costs at least its
    length plus one quoted line (``len + 4``); only the others take the slower road.
    Both tests are single-character scans, the fastest a string offers."""
    return [
        len(body) + 4 if "<" not in body and "\r" not in body else text_floor(body)
        for body in bodies
    ]


def comment_floor(comments: Sequence[Comment], index: int, trust: Trust) -> int:
    """A lower bound of ``view_size`` of comment ``index`` as an ordinary (not trigger)
    comment, read without sanitising it, so the 3:1 walk can pass over a comment
    that cannot fit without building it.

    Every part is one ``view_size`` counts, at its least: the author and link as
    the model will read them (else nothing), the shortest time, the untrusted flag
    when it is certain, and the text (``text_floor``).
    """
    comment = comments[index]
    author = comment.user.login if comment.user else ""
    size = _heading_size("comment", author, SHORTEST_WHEN, safe_url(comment.html_url))
    if author and not trust.trusted(author, comment.author_association):
        size += _flags_size((UNTRUSTED_FLAG,))
    return size + text_floor(comment.body, exact_html=True)


class Measured(Sequence[int]):
    """Sizes of items in context.md, measured on first access (the 3:1 walk visits few)."""

    def __init__(self, count: int, size_of: Callable[[int], int]) -> None:
        self._count = count
        self._size_of = size_of
        self._cache: dict[int, int] = {}

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: int) -> int:  # type: ignore[override]
        if index not in self._cache:
            self._cache[index] = self._size_of(index)
        return self._cache[index]
