"""Neutralising text from GitHub before a model reads it: one function for every road in.

What a reader of github.com cannot see must not steer the model, and the
model must know whose words it reads. ``neutralise`` is the one function that
does both; build-context's ``context.md`` and every read tool of the MCP
server pass text through it.

* HTML comments (``<!-- ... -->``, and an unclosed ``<!--`` that hides the
  rest of the text on github.com) are removed and replaced by a visible note
  saying how many characters were hidden. Forged Tusk markers go with them.
  Code (file contents, diffs) keeps them: github.com shows code as written.
* Invisible and direction-changing characters (zero-width characters, bidi
  embeddings, overrides and isolates, Unicode tag characters used to smuggle
  ASCII, other control characters) are made visible as ``⟦U+202E⟧``, in
  prose and code alike.
* Text by an author who is neither an allowed user, the bot nor a
  collaborator of the run's repository is flagged ``UNTRUSTED_FLAG``.

Pure functions; the result says what was found so the reader can say it too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

UNTRUSTED_FLAG = "untrusted author: neither an allowed user nor a collaborator"
TRUSTED_ASSOCIATIONS = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})

_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)

# Unicode format characters (category Cf: zero-width, bidi marks, embeddings,
# overrides and isolates, tag characters used to smuggle ASCII), line and
# paragraph separators, Hangul fillers and the variation selectors that can
# smuggle bytes. FE0E/FE0F are left alone: they only pick text or emoji style.
_HIDDEN_RANGES = (
    "\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2"
    "\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0d\ufeff\uffa0\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e007f\U000e0100-\U000e01ef"
)
# C0 controls except tab and newline; DEL and the C1 controls.
_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f"
_HIDDEN_CHARS = re.compile(f"[{_HIDDEN_RANGES}{_CONTROLS}]")
# Most text is plain ASCII; for it only the C0 controls and DEL need looking for,
# and a small class scans faster.
_ASCII_HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f]")


@dataclass(frozen=True)
class Trust:
    """Who counts as trusted: allowed users, the bot, and the repository's collaborators.

    ``collaborators`` None means the list is unknown: GitHub's
    ``author_association`` of the item decides instead.
    """

    allowed: frozenset[str]
    collaborators: frozenset[str] | None = None

    @classmethod
    def of(cls, allowed: Iterable[str], collaborators: Iterable[str] | None = None) -> Trust:
        return cls(
            frozenset(login.lower() for login in allowed),
            None if collaborators is None else frozenset(c.lower() for c in collaborators),
        )

    def trusted(self, login: str | None, association: str | None = None) -> bool:
        name = (login or "").lower()
        if name and name in self.allowed:
            return True
        if self.collaborators is not None:
            return bool(name) and name in self.collaborators
        return (association or "").upper() in TRUSTED_ASSOCIATIONS

    def strangers_only(self) -> Trust:
        """Only allowed users count: for repositories whose collaborators are not ours."""
        return Trust(self.allowed, frozenset())


@dataclass(frozen=True)
class Neutralised:
    text: str
    html_comments: int = 0
    hidden_chars: int = 0
    untrusted: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.html_comments or self.hidden_chars)

    @property
    def author_flags(self) -> tuple[str, ...]:
        return (UNTRUSTED_FLAG,) if self.untrusted else ()

    @property
    def content_flags(self) -> tuple[str, ...]:
        note = describe(self)
        return (note,) if note else ()

    @property
    def flags(self) -> tuple[str, ...]:
        return self.author_flags + self.content_flags


def _visible(match: re.Match[str]) -> str:
    char = match.group(0)
    if char == "\r":
        return ""  # CRLF line ends are not hidden content, just noise
    return f"⟦U+{ord(char):04X}⟧"


def neutralise(text: str | None, *, trusted: bool = True, code: bool = False) -> Neutralised:
    """``text`` as a model may read it: invisible characters shown, HTML comments removed
    (kept in ``code``, which github.com shows as written), the author's trust recorded."""
    text = text or ""
    comments = 0

    def _note(match: re.Match[str]) -> str:
        nonlocal comments
        comments += 1
        return f"⟦hidden HTML comment removed: {len(match.group(0))} characters⟧"

    # Characters first: a zero-width space inside "<!-​-" must not dodge the comment rule.
    hidden = 0

    def _count(match: re.Match[str]) -> str:
        nonlocal hidden
        if match.group(0) != "\r":
            hidden += 1
        return _visible(match)

    scan = _ASCII_HIDDEN if text.isascii() else _HIDDEN_CHARS
    if scan.search(text) is not None:
        text = _HIDDEN_CHARS.sub(_count, text)
    if not code and "<!--" in text:
        text = _HTML_COMMENT.sub(_note, text)
    return Neutralised(text, html_comments=comments, hidden_chars=hidden, untrusted=not trusted)


def one_line(text: str | None) -> str:
    """A one-line field (title, label, branch): neutralised, and a line break in it
    cannot forge a heading."""
    return " ".join(neutralise(text).text.split())


def describe(result: Neutralised) -> str:
    """A short note for the item's heading, or "" when nothing was hidden."""
    parts = []
    if result.html_comments:
        parts.append(f"{result.html_comments} hidden HTML comment(s) removed")
    if result.hidden_chars:
        parts.append(f"{result.hidden_chars} invisible/bidi character(s) shown as ⟦U+…⟧")
    return "; ".join(parts)
