"""Hidden content: what a reader of github.com cannot see must not steer the model.

Two kinds are handled, both before any text reaches the context:

* HTML comments (``<!-- ... -->``, and an unclosed ``<!--`` that hides the
  rest of the text on github.com) are removed and replaced by a visible note
  saying how many characters were hidden. Forged Tusk markers go with them.
* Invisible and direction-changing characters (zero-width characters, bidi
  embeddings, overrides and isolates, Unicode tag characters used to smuggle
  ASCII, other control characters) are made visible as ``⟦U+202E⟧``.

Pure functions; the result says what was found so the context can say it too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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
class Sanitized:
    text: str
    html_comments: int = 0
    hidden_chars: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.html_comments or self.hidden_chars)


def _visible(match: re.Match[str]) -> str:
    char = match.group(0)
    if char == "\r":
        return ""  # CRLF line ends are not hidden content, just noise
    return f"⟦U+{ord(char):04X}⟧"


def sanitize(text: str) -> Sanitized:
    """Strip HTML comments and make invisible characters visible."""
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
    if "<!--" in text:
        text = _HTML_COMMENT.sub(_note, text)
    return Sanitized(text, html_comments=comments, hidden_chars=hidden)


def describe(result: Sanitized) -> str:
    """A short note for the item's heading, or "" when nothing was hidden."""
    parts = []
    if result.html_comments:
        parts.append(f"{result.html_comments} hidden HTML comment(s) removed")
    if result.hidden_chars:
        parts.append(f"{result.hidden_chars} invisible/bidi character(s) shown as ⟦U+…⟧")
    return "; ".join(parts)
