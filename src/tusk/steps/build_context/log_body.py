"""The log issue body (A4), fitted under GitHub's 65,536-character limit.

The job marker (first, so no quoted text can come before it), ``# Task``,
the mention as a ``>`` quote, the run's facts (who asked with what trust and
from which source, the effective permissions, the marker and its error, the
budgets, the network, record-only mode), ``# Context``, the context as a ``>``
quote. When it does not fit, the Task stays whole, as many whole context
lines as fit stay, and a plain note says it was cut and where the whole
context is. The quotes keep their markdown (headings, lists, code) while
mentions, references, HTML and hidden characters act on nothing
(``tusk.text.render.quote_markdown``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tusk.issues.run_facts import RunFacts
from tusk.steps.build_context.items import safe_url
from tusk.text.markers import render_marker
from tusk.text.render import quote_markdown, render

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
    facts: RunFacts | None = None,
    limit: int = BODY_LIMIT,
    nonce: str | None = None,
    thread: str | None = None,
) -> LogBody:
    """The A4 body: the Task whole, as much Context as fits, a note when cut. ``nonce``
    is the claiming run's, in the job marker (``tusk.issues.log_issue``)."""
    data: dict[str, object] = {"jobid": jobid, "repo": repo, **({"nonce": nonce} if nonce else {})}
    if facts is not None:  # the limits across runs count runs per requester (tusk.issues.usage)
        data["requester"] = facts.requester
        if facts.budget_usd is not None:  # held against the requester's cap while it runs
            data["budget_usd"] = facts.budget_usd
    if thread:  # the run holds its thread while this issue is open (tusk.issues.thread_runs)
        data["thread"] = thread
    marker = render_marker("job", data)
    task_text, context_text = task_text.rstrip("\n"), context_text.rstrip("\n")
    # Quoting is line by line and each line depends only on the lines before it, so
    # the first k quoted lines are the quote of the first k lines: quote once, cut after.
    task_lines_all = quote_markdown(task_text).split("\n")
    context_lines_all = quote_markdown(context_text).split("\n")

    def body(task_lines: int | None, context_lines: int | None) -> str:
        task = _head(task_lines_all, task_lines)
        context = _head(context_lines_all, context_lines)
        shown = len("\n".join(context_text.split("\n")[: len(context)])) if context else 0
        return render(
            "log_issue.md.j2",
            marker=marker,
            task="\n".join(task) or ">",
            context="\n".join(context) or ">",
            facts=facts,
            task_cut=task_lines is not None,
            context_cut=context_lines is not None,
            context_total=len(context_text),
            context_shown=shown,
            artifact_name=artifact_name,
            artifact_url=safe_url(artifact_url),
        )

    # One quoting pass measures every line; a second renders what fits.
    frame = utf16_len(body(None, 0))
    keep, total = _context_lines_that_fit(context_lines_all, frame, limit)
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
    keep_task = _largest(len(task_lines_all), lambda k: utf16_len(body(k, 0)) <= limit)
    return LogBody(body(keep_task or 0, 0), True, True)


def _context_lines_that_fit(lines: list[str], frame: int, limit: int) -> tuple[int | None, int]:
    """How many leading quoted context lines fit beside a frame of ``frame``
    characters, and how many lines there are (a newline counted per line, never
    too few)."""
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


def _head(lines: list[str], count: int | None) -> list[str]:
    return lines if count is None else lines[:count]


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
