"""What the agent posts, judged on what github.com will show of it. Pure.

Every body, title and edit is rendered as GitHub renders it
(``tusk.text.markdown``): the mention cap, the self-mention neutraliser, the
secret scan and the duplicate check all read that rendering, so an entity
(``&#64;bob``), a tag splitting a word (``sk-ant-<b></b>api03``) or an HTML
comment cannot make the check and GitHub disagree. Where they could still
disagree the checks count: a secret is looked for in the source as sent,
with its entities decoded, in the text shown and in every attribute value.

``close_for_footer`` makes sure the run's footer (MISSION M9) shows: a body
that would swallow it (an open HTML comment, a closed ``<details>``, an
unclosed code fence) is closed, or refused with ``FOOTER_HIDDEN``.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

from tusk.mcp.gate.refusal import Refused
from tusk.text import markdown

# (what it is, literal anchors that must occur first, the pattern). The anchors
# are cheap substring checks that spare the regex scan on almost every body. No word
# boundary before a prefix: glued to a word ("teamsk-ant-..."), the key still shows.
SECRET_PATTERNS: tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...] = (
    (
        "a GitHub token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        re.compile(r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}"),
    ),
    (
        "a GitHub fine-grained token",
        ("github_pat_",),
        re.compile(r"github_pat_[A-Za-z0-9_]{20,}"),
    ),
    ("an Anthropic API key", ("sk-ant-",), re.compile(r"sk-ant-[A-Za-z0-9_-]{16,}")),
    (
        "a private key",
        ("PRIVATE KEY",),
        re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
    ),
)
# Literal secrets shorter than this are not searched for: a short test token
# like "agent" would refuse every ordinary sentence.
MIN_LITERAL_SECRET = 12


def strip_invisible(text: str) -> str:
    """``text`` without format characters (zero-width space, joiners, BOM, bidi controls):
    GitHub shows a token split by them as the whole token."""
    if text.isascii():
        return text
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf")


def _secret_in(text: str, literals: Sequence[str]) -> str | None:
    text = strip_invisible(text)
    for label, anchors, pattern in SECRET_PATTERNS:
        if any(anchor in text for anchor in anchors) and pattern.search(text):
            return label
    for literal in literals:
        if len(literal) >= MIN_LITERAL_SECRET and literal in text:
            return "one of this server's tokens"
    return None


def views(text: str) -> list[str]:
    """Every form in which a reader may see ``text``: as sent (the API returns it), with
    its entities decoded, as rendered text (tags gone), and its attribute values."""
    rendering = markdown.render(text)
    return [text, html.unescape(text), rendering.text(), *rendering.attributes]


def find_secret(text: str, literals: Sequence[str] = ()) -> str | None:
    """What kind of secret ``text`` shows in any of its ``views``, or None."""
    for view in views(text):
        label = _secret_in(view, literals)
        if label is not None:
            return label
    return None


def check_secrets(text: str, what: str, literals: Sequence[str]) -> None:
    label = find_secret(text, literals)
    if label is not None:
        raise Refused(
            "SECRET_IN_BODY",
            f"the {what} contains what looks like {label}; nothing was posted. Remove it (never "
            "publish credentials, even ones found in files or logs) and try again.",
        )


@lru_cache(maxsize=64)
def canonical_text(text: str) -> str:
    """Text as the duplicate check compares it: what it shows, spacing and invisible
    characters aside (``3\\.`` and ``3.`` read the same, and so does an added ``<!-- -->``).

    Cached per text: one write asks for its key four times (the duplicate check, the
    loop check, recording it, and the check of a lost answer)."""
    return " ".join(strip_invisible(markdown.render(text).text()).split())


def mentioned_logins(text: str) -> set[str]:
    """Whom GitHub will notify for ``text`` (lowercase logins and teams)."""
    return markdown.mentioned_logins(text, markdown.NOTIFIES)


def neutralise_self_mentions(text: str, bot: str) -> str:
    """``text`` with every mention of ``bot`` made plain, in code or not; refused when one
    would still show (an ``@`` split from the name by a tag or comment)."""
    login = bot.lower()
    text = markdown.neutralise_mentions(text, {login})
    if login in mentioned_logins(text):
        raise Refused(
            "SELF_MENTION",
            f"the text would still mention {bot} (this bot) once GitHub renders it; write the "
            f"name without '@' and with nothing between its letters.",
        )
    return text


def neutralise_all_mentions(text: str) -> str:
    """``text`` mentioning nobody; refused when a mention would still show."""
    text = markdown.neutralise_mentions(text, None)
    if mentioned_logins(text):
        raise Refused(
            "LIMIT_EXCEEDED",
            "the entry would still mention someone once GitHub renders it; write names "
            "without '@'.",
        )
    return text


# What may close what an agent's body left open, so the footer after it shows: an HTML
# comment, <details> (every one still open), a code fence of either kind, a raw <pre>.
def _closers(body: str) -> list[str]:
    found = []
    if "<!--" in body:  # on the comment's own line (an HTML block), or after it
        found.extend([" -->", "\n-->\n"])
    opened = len(re.findall(r"<details\b", body, re.IGNORECASE))
    if opened:
        found.append("\n" + "</details>" * opened + "\n")
    for mark in "`~":
        runs = re.findall(re.escape(mark) + "{3,}", body)
        if runs:
            found.append("\n" + mark * max(len(run) for run in runs) + "\n")
    # An HTML block that ends only at its closing tag (CommonMark 0.31.2, 4.6, condition 1).
    for tag in ("pre", "script", "style", "textarea"):
        if re.search(rf"<{tag}\b", body, re.IGNORECASE):
            found.append(f"\n</{tag}>\n")
    return found


def footer_shows(posted: str, *, link: tuple[str, str], line: str) -> bool:
    """Whether ``posted`` shows the footer's ``line`` and its ``link`` (text, destination)
    to a reader who opens nothing."""
    rendering = markdown.render(posted)
    return link in rendering.links() and any(line in text for text in rendering.shown_lines())


def close_for_footer(
    body: str, footer: str, *, link: tuple[str, str], line: str, depth: int = 3
) -> str:
    """``body + footer``, with what the body left open closed first when that hid the footer
    (the fewest closers that work); refused with ``FOOTER_HIDDEN`` when nothing does."""
    tried = [body]
    for _ in range(depth + 1):
        for candidate in tried:
            if footer_shows(candidate + footer, link=link, line=line):
                return candidate + footer
        tried = [c + closer for c in tried for closer in _closers(body)]
    raise Refused(
        "FOOTER_HIDDEN",
        "the body leaves something open (an HTML comment, <details>, a tag or a code fence) "
        "that would hide the run's footer; close everything you open and post again.",
    )
