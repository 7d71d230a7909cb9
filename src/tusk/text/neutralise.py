"""Neutralising text from GitHub before a model reads it: one function for every road in.

What a reader of github.com cannot see must not steer the model, and the
model must know whose words it reads. ``neutralise`` is the one function that
does both; build-context's ``context.md`` and every read tool of the MCP
server pass text through it.

* HTML comments (``<!-- ... -->``, and an unclosed ``<!--`` that hides the
  rest of the text on github.com) are removed and replaced by a visible note
  saying how many characters were hidden. Forged Tusk markers go with them.
  Code (file contents, diffs) keeps them: github.com shows code as written.
* Other markup github.com never shows goes the same way: link reference
  definitions (``[//]: # (a "Markdown comment")``, CommonMark renders nothing
  for them), footnote definitions nothing refers to, and processing
  instructions, declarations and CDATA sections (raw HTML that a browser
  parses as a comment).
* Invisible and direction-changing characters (zero-width characters, bidi
  embeddings, overrides and isolates, Unicode tag characters used to smuggle
  ASCII, other default-ignorable and control characters) are made visible as
  ``⟦U+202E⟧``, in prose and code alike.
* Text by an author who is neither an allowed user, the bot nor a
  collaborator of the run's repository is flagged ``UNTRUSTED_FLAG``.

Pure functions; the result says what was found so the reader can say it too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_block import reference as _commonmark_reference

UNTRUSTED_FLAG = "untrusted author: neither an allowed user nor a collaborator"
# Without a collaborator list only the repository's owner is trusted by association:
# GitHub's COLLABORATOR is any invited role (read and triage too) and MEMBER any member
# of the owning organisation, so those may flag text as untrusted, never vouch for it.
TRUSTED_ASSOCIATIONS = frozenset({"OWNER"})

_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)

# Unicode format characters (category Cf: zero-width, bidi marks, embeddings,
# overrides and isolates, tag characters used to smuggle ASCII), line and
# paragraph separators, Hangul fillers, the variation selectors that can
# smuggle bytes, and the rest of Unicode's Default_Ignorable_Code_Point
# (DerivedCoreProperties.txt): code points renderers show as nothing even where
# no character is assigned yet (U+FFF0-FFF8, the whole U+E0000-E0FFF block).
# FE0E/FE0F are left alone where they only pick text or emoji style (once,
# after another character); a run of them spells bits and is shown.
_HIDDEN_RANGES = (
    "\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2"
    "\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0d\ufeff\uffa0\ufff0-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
)
_STYLE_RUN = "(?<=[\ufe0e\ufe0f])[\ufe0e\ufe0f]"
# C0 controls except tab and newline; DEL and the C1 controls.
_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f"
_HIDDEN_CHARS = re.compile(f"[{_HIDDEN_RANGES}{_CONTROLS}]|{_STYLE_RUN}")
# For readers that must see text as github.com shows it (permission markers).
INVISIBLE = _HIDDEN_CHARS
# Most text is plain ASCII; for it only the C0 controls and DEL need looking for,
# and a small class scans faster.
_ASCII_HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f]")


# Raw HTML a browser parses as a (bogus) comment, up to its first ">": processing
# instructions, declarations (<!DOCTYPE ...>, <!X ...>) and CDATA sections. One
# that opens a line is an HTML block and, never closed, hides the rest.
_HTML_OPENER = r"<(?:\?|![A-Za-z]|!\[CDATA\[)"
_HIDDEN_HTML = re.compile(rf"{_HTML_OPENER}[^>]*>|^ {{0,3}}{_HTML_OPENER}[^>]*\Z", re.MULTILINE)
# A footnote definition ([^label]: text) and the lines that continue its paragraph.
_FOOTNOTE = re.compile(r"^ {0,3}\[\^([^\]\s]+)\]:.*(?:\n[ \t]*\S.*)*", re.MULTILINE)


def _recording_reference(state: Any, start: int, end: int, silent: bool) -> bool:
    """CommonMark's own link reference definition rule, noting the lines it takes."""
    found = _commonmark_reference(state, start, end, silent)
    if found and not silent:
        state.env.setdefault("definitions", []).append((start, state.line))
    return bool(found)


_PARSER = MarkdownIt("commonmark")
_PARSER.block.ruler.at("reference", _recording_reference)


def _definition_spans(text: str) -> list[tuple[int, int]]:
    """The line ranges [start, end) of ``text`` that are link reference definitions."""
    env: dict[str, Any] = {}
    _PARSER.parse(text, env)
    return list(env.get("definitions", []))


@dataclass(frozen=True)
class Trust:
    """Who counts as trusted: allowed users, the bot, and the repository's collaborators.

    ``collaborators`` None means the list is unknown: then GitHub's
    ``author_association`` may trust only the repository's owner (``OWNER``); a
    ``COLLABORATOR`` or ``MEMBER`` by association is flagged, since its role is not
    visible (read and triage collaborators are ``COLLABORATOR`` too).
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
    hidden_markup: int = 0  # link and footnote definitions, processing instructions...

    @property
    def changed(self) -> bool:
        return bool(self.html_comments or self.hidden_chars or self.hidden_markup)

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
    markup = 0
    if not code:
        if "<!--" in text:
            text = _HTML_COMMENT.sub(_note, text)
        text, markup = _remove_hidden_markup(text)
    return Neutralised(
        text,
        html_comments=comments,
        hidden_chars=hidden,
        untrusted=not trusted,
        hidden_markup=markup,
    )


def _remove_hidden_markup(text: str) -> tuple[str, int]:
    """Markdown and HTML github.com renders as nothing, each replaced by a visible note."""
    removed = 0

    def note(what: str, size: int) -> str:
        nonlocal removed
        removed += 1
        return f"⟦hidden {what} removed: {size} characters⟧"

    if "<?" in text or "<!" in text:
        text = _HIDDEN_HTML.sub(lambda m: note("HTML", len(m.group(0))), text)
    if "[^" in text:
        referenced = {m.group(1) for m in re.finditer(r"\[\^([^\]\s]+)\](?!:)", text)}
        text = _FOOTNOTE.sub(
            lambda m: (
                m.group(0)
                if m.group(1) in referenced
                else note("footnote definition", len(m.group(0)))
            ),
            text,
        )
    if "]:" in text:
        lines = text.split("\n")
        for start, end in reversed(_definition_spans(text)):
            size = sum(len(line) + 1 for line in lines[start:end]) - 1
            lines[start:end] = [note("link definition", size)]
        text = "\n".join(lines)
    return text, removed


def one_line(text: str | None) -> str:
    """A one-line field (title, label, branch): neutralised, and a line break in it
    cannot forge a heading."""
    return " ".join(neutralise(text).text.split())


def describe(result: Neutralised) -> str:
    """A short note for the item's heading, or "" when nothing was hidden."""
    parts = []
    if result.html_comments:
        parts.append(f"{result.html_comments} hidden HTML comment(s) removed")
    if result.hidden_markup:
        parts.append(
            f"{result.hidden_markup} hidden markup part(s) removed (link or footnote "
            "definitions, processing instructions, declarations)"
        )
    if result.hidden_chars:
        parts.append(f"{result.hidden_chars} invisible/bidi character(s) shown as ⟦U+…⟧")
    return "; ".join(parts)
