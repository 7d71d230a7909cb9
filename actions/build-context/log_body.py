"""The log issue body (A4), fitted under GitHub's 65,536-character limit.

Exactly: the job marker (first, so no quoted text can come before it),
``# Task``, the mention as a ``>`` quote, ``# Context``, the context as a
``>`` quote. When it does not fit, the Task stays whole, as many whole
context lines as fit stay, and a plain note says it was cut and where the
whole context is. Quoting is ``tusk.render.quote_block``'s, in the template.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tusk.actions.build_context.build_context import safe_url

from tusk.markers import render_marker
from tusk.render import quote_block, render

# GitHub refuses issue bodies past this many characters.
BODY_LIMIT = 65536


def utf16_len(text: str) -> int:
    """Length as GitHub may count it (UTF-16 units); never less than ``len``."""
    return len(text.encode("utf-16-le")) // 2


@dataclass(frozen=True)
class LogBody:
    body: str
    context_cut: bool
    task_cut: bool


def log_issue_body(
    *,
    jobid: str,
    repo: str,
    task_text: str,
    context_text: str,
    artifact_name: str,
    artifact_url: str | None,
    limit: int = BODY_LIMIT,
) -> LogBody:
    """The A4 body: the Task whole, as much Context as fits, a note when cut."""
    marker = render_marker("job", {"jobid": jobid, "repo": repo})
    task_text, context_text = task_text.rstrip("\n"), context_text.rstrip("\n")

    def body(task_lines: int | None, context_lines: int | None) -> str:
        task = _head(task_text, task_lines)
        context = _head(context_text, context_lines)
        return render(
            "log_issue.md.j2",
            marker=marker,
            task=task,
            context=context,
            task_cut=task_lines is not None,
            context_cut=context_lines is not None,
            context_total=len(context_text),
            context_shown=len(context),
            artifact_name=artifact_name,
            artifact_url=safe_url(artifact_url),
        )

    # One quoting pass measures every line; a second renders what fits.
    frame = utf16_len(body(None, 0))
    keep, total = _context_lines_that_fit(context_text, frame, limit)
    if keep == total:
        whole = body(None, None)
        if utf16_len(whole) <= limit:
            return LogBody(whole, False, False)
        keep = total - 1
    if keep is not None and utf16_len(body(None, keep)) > limit:
        # The note's numbers grew by a digit or two: search below the estimate.
        keep = _largest(keep + 1, lambda k: utf16_len(body(None, k)) <= limit)
    if keep is not None:
        return LogBody(body(None, keep), True, False)
    # The task alone is too long: cut it too, and show no context.
    task_lines = task_text.split("\n")
    keep_task = _largest(len(task_lines), lambda k: utf16_len(body(k, 0)) <= limit)
    return LogBody(body(keep_task or 0, 0), True, True)


def _context_lines_that_fit(context_text: str, frame: int, limit: int) -> tuple[int | None, int]:
    """How many leading context lines fit beside a frame of ``frame`` characters,
    and how many lines there are.

    ``quote_block`` quotes line by line, so each line's quoted size is known
    from one pass; the estimate counts a newline per line, never too few.
    """
    lines = quote_block(context_text).split("\n")
    if frame > limit:
        return None, len(lines)
    room = limit - frame
    used = kept = 0
    for line in lines:
        used += utf16_len(line) + 1
        if used > room:
            break
        kept += 1
    return kept, len(lines)


def _head(text: str, lines: int | None) -> str:
    if lines is None:
        return text
    return "\n".join(text.split("\n")[:lines])


def _largest(count: int, fits: Callable[[int], bool]) -> int | None:
    """The largest k in [0, count) with ``fits(k)``, assuming ``fits`` is monotone."""
    if count == 0 or not fits(0):
        return None
    low, high = 0, count - 1
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low
