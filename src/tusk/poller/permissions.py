"""The permission marker (MISSION P4): grammar, parser, and narrowing.

A mention may carry one marker in its prose::

    @tusk-bot [permissions: no-issue, comment-limit=1, pr-limit=1] fix the typo

Grammar (case-insensitive, spaces around items allowed)::

    marker  = "[permissions:" item *("," item) "]"
    item    = flag / limit / repos
    flag    = "read-only" / "comment-on-this-issue" / "comment-on-this-thread"
            / "no-comment" / "no-issue" / "no-pr" / "no-push" / "no-memory"
            / "approve"
    item    = flag / limit / repos / run
    limit   = ("comment-limit" / "issue-limit" / "pr-limit" / "memory-limit") "=" 1*DIGIT
    repos   = "repos=" repo *("+" repo)          ; repo = owner/name
    run     = "budget=" ["$"] 1*DIGIT ["." 1*DIGIT]   ; USD of model spend
            / "turns=" 1*DIGIT / "minutes=" 1*DIGIT

A marker can only narrow the configured defaults: limits are the smaller of
the two, operations the intersection. The run's own limits (``budget``,
``turns``, ``minutes``: MISSION C4) may only lower the configured
``agent.max_budget_usd``, ``limits.max_turns`` and ``limits.run_minutes``;
a value above them is an error, so the marker fails closed (asking for more
than is allowed is not silently turned into less). ``approve`` narrows too: every write of
the run waits for a person's approval (``tusk.approval``); no item takes an
approval the configuration requires away, and a marker that fails closed but
names ``approve`` keeps it. A marker that does not parse fails
closed: the run may reply once on its own thread and do nothing else, and
``PermissionConfig.error`` says why so the agent and the log issue show it.

Markers are read after Unicode NFKC normalisation, so the full-width forms
CJK input methods type (``［permissions： no-pr］``, ``，``, ``＝``) mean what
their ASCII twins mean, and without the invisible characters github.com shows
as nothing (a zero-width space pasted into ``permis​sions``). ``permissions:``
after another opening bracket (``【permissions: no-pr】``), or spelled with
look-alike letters of another alphabet (a Cyrillic ``р``), looks like a marker
but is not one: it fails closed too, rather than being ignored. So does a
near miss (``near_miss``): a misspelt word within two edits of ``permissions``
or a short form of it (``[permisions: no-pr]``, ``[perms: no-pr]``), other
brackets (``(permissions: no-pr)``), no colon (``[permissions no-pr]``) or no
brackets (``permissions: no-pr``).
``docs/permission-marker.md`` is the user-facing description.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tusk.contracts.models import REPO_PATTERN, PermissionConfig, WriteOperation
from tusk.text.mentions import prose
from tusk.text.neutralise import INVISIBLE

# The singular is recognised only to be refused: a typo must fail closed, not open.
_OPENER = re.compile(r"\[\s*permission(?P<plural>s?)\s*:", re.IGNORECASE)
_LIMIT_KEYS: dict[str, str] = {
    "comment-limit": "comments_per_thread",
    "issue-limit": "issues_per_repo",
    "pr-limit": "prs_per_repo",
    "memory-limit": "memory_writes",
}
_LIMIT_OF_OPERATION: dict[WriteOperation, str] = {
    "comment": "comments_per_thread",
    "issue": "issues_per_repo",
    "pull_request": "prs_per_repo",
    "memory": "memory_writes",
}
_REMOVES: dict[str, WriteOperation] = {
    "no-comment": "comment",
    "no-issue": "issue",
    "no-pr": "pull_request",
    "no-push": "push",
    "no-memory": "memory",
}
# The run's own limits a marker may lower: key -> (PermissionConfig field, setting, pattern).
_RUN_KEYS: dict[str, tuple[str, str, str]] = {
    "budget": ("budget_usd", "agent.max_budget_usd", r"\$?[0-9]{1,6}(?:\.[0-9]{1,4})?"),
    "turns": ("max_turns", "limits.max_turns", r"[0-9]{1,5}"),
    "minutes": ("run_minutes", "limits.run_minutes", r"[0-9]{1,5}"),
}
_THIS_THREAD_FLAGS = frozenset({"comment-on-this-issue", "comment-on-this-thread"})
APPROVE_FLAG = "approve"
FLAGS = frozenset({"read-only", APPROVE_FLAG, *_THIS_THREAD_FLAGS, *_REMOVES})
MAX_MARKER_CHARS = 500
# Opening brackets NFKC leaves alone that someone may still type a marker with.
_LOOKALIKE_OPENER = re.compile(
    "[\u2045\u2772\u27e6\u27e8\u27ea\u2983\u3008\u300a\u3010\u3014\u3016\u3018\u301a]"
    r"\s*permissions?\s*:",
    re.IGNORECASE,
)


# Letters of other alphabets that look like the Latin ones of "permissions" (and a
# few more), which NFKC leaves alone: Cyrillic, Greek and Latin small capitals.
_LOOKALIKE_LETTERS = str.maketrans(
    "аеорсуіјѕԁһкмпхАВЕКМНОРСТХІЈЅοριενκμτΟΡΙΕΝΚΜΤᴘᴇʀᴍɪꜱᴏɴ",
    "aeopcyijsdhkmnxABEKMHOPCTXIJSopievkmtOPIENKMTpermison",
)


def fold(text: str) -> tuple[str, list[int]]:
    """``text`` NFKC-normalised character by character, without the characters
    github.com shows as nothing, and for each character of the result the index of
    the character of ``text`` it came from."""
    if text.isascii() and INVISIBLE.search(text) is None:
        return text, list(range(len(text)))
    out: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        if INVISIBLE.match(char) and char != "\n":
            continue
        folded = unicodedata.normalize("NFKC", char) if not char.isascii() else char
        out.append(folded)
        origin.extend([index] * len(folded))
    return "".join(out), origin


def _visible_nfkc(text: str) -> str:
    return INVISIBLE.sub("", unicodedata.normalize("NFKC", INVISIBLE.sub("", text)))


class MarkerError(ValueError):
    """The marker does not follow the grammar; the message says where."""


@dataclass(frozen=True)
class Marker:
    """A parsed marker: what it asks for, before narrowing against the defaults."""

    text: str
    flags: frozenset[str] = frozenset()
    limits: dict[str, int] = field(default_factory=dict)
    repos: tuple[str, ...] | None = None
    run: dict[str, float] = field(default_factory=dict)  # budget, turns, minutes as asked


# --------------------------------------------------------------------------- near misses

# Words a marker may be mistyped as: within two edits of "permissions", or a short
# form of it ("perm", "perms", "permis").
_MARKER_WORD = "permissions"
# A word after an optional opening bracket, an optional colon, and the first item.
_NEAR = re.compile(
    r"(?P<open>[\[({<])?[ \t]*(?<![A-Za-z])(?P<word>[A-Za-z]{4,14})(?![A-Za-z])"
    r"[ \t]*(?P<colon>[:=]?)[ \t]*(?P<item>[A-Za-z][A-Za-z-]*(?:[ \t]*=)?)?"
)


def edit_distance(a: str, b: str) -> int:
    """Insertions, deletions, substitutions and swaps of neighbours turning ``a`` into
    ``b`` (optimal string alignment; pure)."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, char in enumerate(a, start=1):
        current = [i] + [0] * len(b)
        for j, other in enumerate(b, start=1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char != other))
            if i > 1 and j > 1 and char == b[j - 2] and a[i - 2] == other:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[-1]


def _markerish(word: str) -> bool:
    word = word.lower()
    if edit_distance(word, _MARKER_WORD) <= 2:
        return True
    stem = word[:-1] if word.endswith("s") else word
    return len(stem) >= 4 and _MARKER_WORD.startswith(stem)


def _known_item(item: str | None) -> bool:
    if not item:
        return False
    key = item.rstrip("= \t").lower()
    settings = (*_LIMIT_KEYS, *_RUN_KEYS, "repos")
    return key in FLAGS or (item.rstrip().endswith("=") and key in settings)


def near_miss(folded: str, exact: Iterable[re.Match[str]]) -> re.Match[str] | None:
    """Text of ``folded`` (prose, NFKC) that looks like a permission marker but is not one,
    or None: a misspelt word (``[permisions: no-pr]``, ``[perms: no-pr]``), other brackets
    (``(permissions: no-pr)``), a missing colon (``[permissions no-pr]``) or missing
    brackets (``permissions: no-pr``). Text counts when its word is marker-like and it has
    a colon or names a marker item, and a bracket or such an item (so the prose "we lack
    permissions: ..." is no marker). The exact opener (``exact``) is left to the parser."""
    taken = {match.start() for match in exact}
    for match in _NEAR.finditer(folded):
        if match.start() in taken:
            continue
        known = _known_item(match.group("item"))
        if not ((match.group("colon") or known) and (match.group("open") or known)):
            continue
        if _markerish(match.group("word")):
            return match
    return None


def near_miss_reason(match: re.Match[str]) -> str:
    """What is wrong with a ``near_miss``, and how to write the marker."""
    word, opener = match.group("word"), match.group("open") or ""
    if word.lower() not in (_MARKER_WORD, "permission"):
        why = f"{word!r} is not 'permissions'"
    elif opener != "[":
        why = "a marker is written in square brackets" if opener else "it has no brackets"
    else:
        why = "there is no ':' after 'permissions'"
    return (
        f"{match.group(0).strip()!r} looks like a permission marker but is not one "
        f"({why}); write it exactly as [permissions: item, ...]"
    )


def find_marker_text(markdown: str | None) -> str | None:
    """The marker as written in the prose of ``markdown``, or None when there is none.

    Code, quotes and HTML comments do not count, so quoting someone else's
    marker changes nothing. Two markers are refused (ambiguous).
    """
    if not markdown:
        return None
    markdown = markdown.replace("\r\n", "\n")  # as prose() does, so offsets agree
    folded, origin = fold(prose(markdown))
    openers = list(_OPENER.finditer(folded))
    lookalike = _LOOKALIKE_OPENER.search(folded)
    if lookalike is not None:
        raise MarkerError(
            f"{lookalike.group(0)!r} looks like a permission marker but is not one; write it "
            "with square brackets: [permissions: ...]"
        )
    skeleton = folded.translate(_LOOKALIKE_LETTERS)
    spelled = [
        m for m in _OPENER.finditer(skeleton) if m.start() not in {o.start() for o in openers}
    ]
    if spelled:
        raise MarkerError(
            f"{folded[spelled[0].start() : spelled[0].end()]!r} looks like a permission marker "
            "but is spelled with letters of another alphabet; type [permissions: ...] in "
            "Latin letters"
        )
    missed = near_miss(folded, openers)
    if missed is not None:
        raise MarkerError(near_miss_reason(missed))
    if not openers:
        return None
    if len(openers) > 1:
        raise MarkerError("more than one [permissions: ...] marker; write exactly one")
    start = openers[0].start()
    end = folded.find("]", start)
    newline = folded.find("\n", start)
    if end == -1 or (newline != -1 and newline < end):
        raise MarkerError("the marker is not closed with ']' on the same line")
    return markdown[origin[start] : origin[end] + 1]


def parse_marker(text: str) -> Marker:
    """Parse one marker, ``[permissions: ...]``, raising ``MarkerError`` with the reason.

    The grammar is read after NFKC normalisation; ``Marker.text`` keeps what was typed."""
    if len(text) > MAX_MARKER_CHARS:
        raise MarkerError(f"the marker is longer than {MAX_MARKER_CHARS} characters")
    folded = _visible_nfkc(text)
    opener = _OPENER.match(folded)
    if opener is None or not folded.endswith("]"):
        raise MarkerError("a marker looks like [permissions: item, item, ...]")
    if not opener.group("plural"):
        raise MarkerError("write [permissions: ...] (plural), not [permission: ...]")
    inner = folded[opener.end() : -1].strip()
    if not inner:
        raise MarkerError("the marker lists no permissions")
    flags: set[str] = set()
    limits: dict[str, int] = {}
    repos: tuple[str, ...] | None = None
    run: dict[str, float] = {}
    for raw_item in inner.split(","):
        item = raw_item.strip().lower()
        if not item:
            raise MarkerError("empty item between commas")
        key, has_value, value = (part.strip() for part in item.partition("="))
        if not has_value:
            if key not in FLAGS:
                raise MarkerError(f"unknown permission {key!r}; known: {', '.join(sorted(FLAGS))}")
            flags.add(key)
            continue
        if key in _LIMIT_KEYS:
            if key in limits:
                raise MarkerError(f"{key} is given twice")
            if not re.fullmatch(r"[0-9]{1,4}", value):
                raise MarkerError(f"{key} needs a whole number, got {value!r}")
            limits[key] = int(value)
        elif key == "repos":
            if repos is not None:
                raise MarkerError("repos is given twice; join repositories with '+'")
            names = tuple(name.strip() for name in value.split("+"))
            bad = [name for name in names if not re.fullmatch(REPO_PATTERN, name)]
            if bad or not names:
                raise MarkerError(f"repos needs owner/name joined by '+', got {value!r}")
            repos = names
        elif key in _RUN_KEYS:
            run[key] = _run_value(key, value, given=key in run)
        else:
            known = ", ".join([*sorted(_LIMIT_KEYS), *sorted(_RUN_KEYS), "repos"])
            raise MarkerError(f"unknown setting {key!r}; known: {known}")
    return Marker(text=text, flags=frozenset(flags), limits=limits, repos=repos, run=run)


def _run_value(key: str, value: str, *, given: bool) -> float:
    """One of the run's own limits as written: a positive number (USD for budget)."""
    if given:
        raise MarkerError(f"{key} is given twice")
    if not re.fullmatch(_RUN_KEYS[key][2], value):
        what = "an amount in USD such as 0.50" if key == "budget" else "a whole number"
        raise MarkerError(f"{key} needs {what}, got {value!r}")
    number = float(value.lstrip("$"))
    if number <= 0:
        raise MarkerError(f"{key} must be more than 0, got {value!r}")
    return number


def _lowered(defaults: PermissionConfig, marker: Marker) -> dict[str, float | int | None]:
    """The run's own limits: the configured ones, lowered by the marker; a value above
    the configured one is refused (the marker fails closed)."""
    values: dict[str, float | int | None] = {
        name: getattr(defaults, name) for name, _, _ in _RUN_KEYS.values()
    }
    for key, asked in marker.run.items():
        name, setting, _ = _RUN_KEYS[key]
        configured = values[name]
        if configured is not None and asked > configured:
            raise MarkerError(
                f"{key}={asked:g} is above what {setting} allows ({configured:g}); a marker "
                "can only lower it"
            )
        values[name] = asked if name == "budget_usd" else int(asked)
    return values


def narrow(defaults: PermissionConfig, marker: Marker) -> PermissionConfig:
    """Apply ``marker`` to ``defaults``; the result never allows more than ``defaults``.
    Raises ``MarkerError`` when the marker asks for more of the run's own limits."""
    run = _lowered(defaults, marker)
    operations: list[WriteOperation] = list(defaults.operations)
    if "read-only" in marker.flags:
        operations = []
    if marker.flags & _THIS_THREAD_FLAGS:
        operations = [op for op in operations if op == "comment"]
    removed = {_REMOVES[flag] for flag in marker.flags if flag in _REMOVES}
    operations = [op for op in operations if op not in removed]
    limits = {
        name: getattr(defaults, name)
        for name in ("comments_per_thread", "issues_per_repo", "prs_per_repo", "memory_writes")
    }
    for key, value in marker.limits.items():
        name = _LIMIT_KEYS[key]
        limits[name] = min(limits[name], value)
    return _coherent(
        marker=marker.text,
        error=None,
        operations=operations,
        only_this_thread=defaults.only_this_thread or bool(marker.flags & _THIS_THREAD_FLAGS),
        repos=_intersect_repos(defaults.repos, marker.repos),
        limits=limits,
        approve=defaults.approve or APPROVE_FLAG in marker.flags,
        run=run,
    )


def fail_closed(defaults: PermissionConfig, *, marker: str | None, reason: str) -> PermissionConfig:
    """The most restrictive useful set: one reply on the trigger's own thread."""
    operations: list[WriteOperation] = ["comment"] if defaults.allows("comment") else []
    return _coherent(
        marker=marker,
        error=reason,
        operations=operations,
        only_this_thread=True,
        repos=defaults.repos,
        limits={
            "comments_per_thread": min(defaults.comments_per_thread, 1),
            "issues_per_repo": 0,
            "prs_per_repo": 0,
            "memory_writes": 0,
        },
        # Asked for in a marker that did not parse, approval still holds: it only narrows.
        approve=defaults.approve or APPROVE_FLAG in _visible_nfkc(marker or "").lower(),
        run={name: getattr(defaults, name) for name, _, _ in _RUN_KEYS.values()},
    )


def effective_permissions(defaults: PermissionConfig, markdown: str | None) -> PermissionConfig:
    """The permission config for a mention: defaults, narrowed by its marker if any."""
    try:
        text = find_marker_text(markdown)
    except MarkerError as error:
        return fail_closed(defaults, marker=_raw_marker_hint(markdown), reason=str(error))
    if text is None:
        return defaults
    try:
        return narrow(defaults, parse_marker(text))
    except MarkerError as error:
        return fail_closed(defaults, marker=text, reason=str(error))


def _raw_marker_hint(markdown: str | None) -> str | None:
    """The start of the first marker-looking text, for the error report."""
    if not markdown:
        return None
    markdown = markdown.replace("\r\n", "\n")
    folded, origin = fold(prose(markdown))
    opener = (
        _LOOKALIKE_OPENER.search(folded)
        or _OPENER.search(folded)
        or _OPENER.search(folded.translate(_LOOKALIKE_LETTERS))
        or near_miss(folded, ())
    )
    if opener is None:
        return None
    start = origin[opener.start()]
    line_end = markdown.find("\n", start)
    return markdown[start : line_end if line_end != -1 else None][:MAX_MARKER_CHARS]


def _intersect_repos(
    configured: tuple[str, ...] | None, asked: tuple[str, ...] | None
) -> tuple[str, ...] | None:
    if asked is None:
        return configured
    if configured is None:
        return _dedupe(asked)
    allowed = {name.lower() for name in configured}
    return _dedupe(name for name in asked if name.lower() in allowed)


def _dedupe(names: Iterable[str]) -> tuple[str, ...]:
    seen: dict[str, str] = {}
    for name in names:
        seen.setdefault(name.lower(), name)
    return tuple(seen.values())


def _coherent(
    *,
    marker: str | None,
    error: str | None,
    operations: list[WriteOperation],
    only_this_thread: bool,
    repos: tuple[str, ...] | None,
    limits: dict[str, int],
    approve: bool,
    run: dict[str, Any],
) -> PermissionConfig:
    """Keep operations and limits in agreement: a zero limit removes the operation, a
    removed operation gets a zero limit."""
    kept = [op for op in operations if limits.get(_LIMIT_OF_OPERATION.get(op, ""), 1) > 0]
    for op, name in _LIMIT_OF_OPERATION.items():
        if op not in kept:
            limits[name] = 0
    return PermissionConfig(
        marker=marker,
        error=error,
        operations=tuple(kept),
        only_this_thread=only_this_thread,
        repos=repos,
        approve=approve,
        **limits,
        **run,
    )
