"""What github.com shows of a markdown text, and whom it notifies: the one markdown module.

GitHub renders every body with cmark-gfm, its own fork of cmark (tables,
strikethrough, autolinks, task lists, the tag filter, footnotes; raw HTML kept,
then sanitised), and finds @mentions in the page's text nodes outside code
(html-pipeline's mention filter skips ``pre``, ``code`` and ``a``). This module
renders with the same parser (``cmarkgfm``) and builds the page as a browser
does (``selectolax``'s Lexbor, an HTML5 tree builder): entities are decoded
(``&#64;bob`` is ``@bob``), a tag splits nothing that reads as one string
(``sk-ant-<b></b>api03`` shows one key), an HTML comment hides what it holds
and a closed ``<details>`` folds what it holds.

One mention grammar (``LOGIN`` and ``TEAM`` after an ``@``) and two named policies:

* ``NOTIFIES``: the mentions GitHub notifies, for every check of text the agent
  posts (the mention cap, the self-mention neutraliser) and for the write-up.
  Where the rendering is ambiguous it counts: a text node's mentions and those of
  its line with the tags removed both count, mentions in links count, and code
  hides none once the text writes ``<code>`` or ``<pre>`` tags of its own.
* ``TRIGGERS``: the mentions that start the bot (MISSION P2): a whole login, in
  prose as GitHub links it, not in code, quotes or links, not an e-mail address.

Pure; ``render`` is cached per text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

import cmarkgfm
from cmarkgfm.cmark import Options
from selectolax.lexbor import LexborHTMLParser, LexborNode

# Raw HTML is kept as GitHub keeps it (its sanitiser only removes; nothing it removes shows
# more text), footnotes are on as on github.com.
_OPTIONS = Options.CMARK_OPT_UNSAFE | Options.CMARK_OPT_FOOTNOTES
# Elements that start a new line of text: what is one string is read within one.
_BLOCKS = frozenset(
    {
        *("address", "article", "aside", "blockquote", "br", "dd", "details", "dialog"),
        *("div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form"),
        *("h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol"),
        *("p", "pre", "section", "summary", "table", "tbody", "td", "tfoot", "th"),
        *("thead", "tr", "ul"),
    }
)
_CODE = frozenset({"code", "pre"})
_CODE_TAG = re.compile(r"</?(?:code|pre)\b", re.IGNORECASE)

# ----------------------------------------------------------------------------- the grammar

# Where a login ends is GitHub's: at the first character no login holds, "[" included, so
# ``@tusk-bot[bot]`` mentions (and notifies) ``tusk-bot``; an app's ``[bot]`` account is
# never mentioned by name. Case never matters (``@TUSK-BOT`` is ``tusk-bot``).
LOGIN = r"[A-Za-z0-9][A-Za-z0-9-]{0,38}"
TEAM = r"(?:/[A-Za-z0-9][A-Za-z0-9_.-]*)?"
# Each way of writing the "@" that the page shows as one: the character, and the
# entities cmark or a browser decode to it, with or without their ";".
AT_SPELLINGS = r"(?:@|&#0*64;?|&#[xX]0*40;?|&commat;?)"


@dataclass(frozen=True)
class MentionPolicy:
    """Where a mention counts and what may touch it."""

    name: str
    before: str  # a lookbehind: what may not stand right before the "@"
    after: str  # a lookahead: what may not follow the login
    skip: frozenset[str]  # runs that hold no mention: "code", "quote", "link"
    # Ambiguity counts: each line with its tags removed is searched too, and code the text
    # wrote as HTML (``<code>``, ``<pre>``) hides nothing.
    counting: bool

    def pattern(self, login: str | None = None) -> re.Pattern[str]:
        """``@login`` (the login in group 1), or any login with its team when None."""
        return _compiled(self.before + "@" + _who(login) + self.after)

    def expression(self) -> str:
        """The grammar where this policy finds a mention, as regex source without groups
        (for the write-up, which embeds it in its own patterns)."""
        return self.before + "@" + LOGIN + TEAM

    def source_pattern(self, login: str | None = None) -> re.Pattern[str]:
        """``pattern`` with every spelling of the "@" (to neutralise the source text)."""
        return _compiled(self.before + AT_SPELLINGS + _who(login) + self.after)


def _who(login: str | None) -> str:
    return f"({re.escape(login)})" if login is not None else f"({LOGIN}{TEAM})"


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


NOTIFIES = MentionPolicy(
    "notifies",
    # GitHub takes any non-word character before the "@"; a "_" counts too, since emphasis
    # markup can end a text node there (``_a_@bob`` is ``<em>a</em>@bob``).
    before=r"(?<![A-Za-z0-9])",
    after=r"(?![A-Za-z0-9-])",
    skip=frozenset({"code"}),
    counting=True,
)
TRIGGERS = MentionPolicy(
    "triggers",
    # Not an e-mail address, a longer login, a team, a URL or the inside of an address.
    before=r"(?<![A-Za-z0-9_.+\-/@`])",
    after=r"(?![A-Za-z0-9_\-/@`]|\.[A-Za-z0-9])",
    skip=frozenset({"code", "quote", "link"}),
    counting=False,
)

# Where a mention GitHub may notify starts, as regex source: an "@" that ``NOTIFIES`` takes,
# before a login's first character (the write-up breaks each one).
MENTION_START = NOTIFIES.before + "@(?=[A-Za-z0-9])"

# ----------------------------------------------------------------------------- the page


@dataclass(frozen=True)
class Run:
    """One text node of the page, and what holds it."""

    text: str
    line: int  # the block holding it: the runs of one line read as one string
    code: bool = False
    quote: bool = False
    link: bool = False
    folded: bool = False  # in a closed <details> (outside its summary), or ``hidden``
    href: str | None = None  # where the link it is the text of goes


@dataclass(frozen=True)
class Mention:
    login: str  # lowercase, with its team
    after: str  # what follows it on its line (a go-away phrase, a permission marker)


@dataclass(frozen=True)
class Rendering:
    """A text as github.com shows it: its text nodes and its attribute values."""

    runs: tuple[Run, ...]
    attributes: tuple[str, ...]  # link destinations, titles, alt text: readable, not shown
    code_trusted: bool  # every code element is one cmark made (the text wrote none)

    def lines(self) -> list[str]:
        """Everything shown as text, code and folded parts included, block by block."""
        out: dict[int, str] = {}
        for run in self.runs:
            out[run.line] = out.get(run.line, "") + run.text
        return list(out.values())

    def text(self) -> str:
        return "\n".join(self.lines())

    def shown_lines(self) -> list[str]:
        """What a reader sees without opening anything, block by block."""
        out: dict[int, str] = {}
        for run in self.runs:
            out[run.line] = out.get(run.line, "") + ("" if run.folded else run.text)
        return list(out.values())

    def links(self) -> list[tuple[str, str]]:
        """(text, destination) of each link text a reader sees, outside code."""
        return [
            (run.text, run.href)
            for run in self.runs
            if run.href is not None and not run.folded and not run.code
        ]

    def skips(self, policy: MentionPolicy, run: Run) -> bool:
        """Whether ``policy`` finds no mention in ``run``."""
        code = run.code and (self.code_trusted or not policy.counting)
        return (
            ("code" in policy.skip and code)
            or ("quote" in policy.skip and run.quote)
            or ("link" in policy.skip and run.link)
        )

    def mentions(self, policy: MentionPolicy, login: str | None = None) -> list[Mention]:
        """Every mention ``policy`` finds, in order (a counting policy may find one twice)."""
        pattern = policy.pattern(login)
        lines: dict[int, str] = {}
        hits: list[tuple[int, int, str]] = []  # line, where the match ends in it, login
        for run in self.runs:
            if self.skips(policy, run):
                continue
            start = len(lines.get(run.line, ""))
            lines[run.line] = lines.get(run.line, "") + run.text
            hits.extend((run.line, start + m.end(), m.group(1)) for m in pattern.finditer(run.text))
        found = [
            Mention(who.lower(), lines[line][end:].split("\n", 1)[0]) for line, end, who in hits
        ]
        if policy.counting:  # a login split by tags still reads as one
            for text in lines.values():
                found.extend(Mention(m.group(1).lower(), "") for m in pattern.finditer(text))
        return found


def html(markdown: str) -> str:
    """``markdown`` as cmark-gfm renders it for github.com."""
    return str(cmarkgfm.github_flavored_markdown_to_html(markdown, options=_OPTIONS))


@lru_cache(maxsize=1024)
def render(markdown: str) -> Rendering:
    """What github.com shows of ``markdown``."""
    return read(html(markdown), markdown)


def read(rendered: str, markdown: str) -> Rendering:
    """What github.com shows of ``rendered``, the HTML made of ``markdown``."""
    runs: list[Run] = []
    attributes: list[str] = []
    for node, where in _walk(LexborHTMLParser(rendered).body):
        if node.tag == "-text":
            if node.text_content:
                runs.append(Run(node.text_content, *where))
        else:
            attributes.extend(value for value in (node.attributes or {}).values() if value)
    # The text's own <code> or <pre> tags: GitHub's HTML parser and a browser's may nest
    # them otherwise than this one does, so their code is not trusted to hide mentions.
    trusted = "<" not in markdown or len(_CODE_TAG.findall(rendered)) == len(
        _CODE_TAG.findall(_without_html(markdown))
    )
    return Rendering(tuple(runs), tuple(attributes), trusted)


def _without_html(markdown: str) -> str:
    """The rendering with the text's raw HTML left out: cmark's own elements only."""
    options = Options.CMARK_OPT_FOOTNOTES
    return str(cmarkgfm.github_flavored_markdown_to_html(markdown, options=options))


# What holds a node: Run's fields after its text (line, code, quote, link, folded, href).
Where = tuple[int, bool, bool, bool, bool, str | None]


def _inside(element: LexborNode, where: Where, line: int) -> Where:
    """What holds the children of ``element``, itself held by ``where``."""
    _, code, quote, link, folded, href = where
    tag = element.tag or ""
    attrs = element.attributes or {}
    folded = folded or "hidden" in attrs
    if tag == "a":
        link, href = True, attrs.get("href") or ""
    return (line, code or tag in _CODE, quote or tag == "blockquote", link, folded, href)


def _walk(root: LexborNode | None) -> Iterator[tuple[LexborNode, Where]]:
    """Every node under ``root`` in document order, with what holds it. Iterative: how
    deep tags nest is the text's choice."""
    if root is None:
        return
    blocks = 0
    top: Where = (0, False, False, False, False, None)
    # (node, what holds it, whether its parent is a closed <details>)
    stack = [(child, top, False) for child in reversed(list(root.iter(include_text=True)))]
    while stack:
        node, where, in_closed_details = stack.pop()
        if in_closed_details and node.tag != "summary":  # all it holds but its summary
            where = (where[0], where[1], where[2], where[3], True, where[5])
        yield node, where
        if node.tag == "-text":
            continue
        line = where[0]
        if node.tag in _BLOCKS:
            blocks += 1
            line = blocks
        inner = _inside(node, where, line)
        closed = node.tag == "details" and "open" not in (node.attributes or {})
        stack.extend(
            (child, inner, closed) for child in reversed(list(node.iter(include_text=True)))
        )


# ----------------------------------------------------------------------------- the policies


def mentioned_logins(markdown: str | None, policy: MentionPolicy = NOTIFIES) -> set[str]:
    """Every login (lowercase; a team with its ``/team``) ``policy`` finds in ``markdown``."""
    if not markdown or not _may_mention(markdown):
        return set()
    if "code" in policy.skip and _no_at_outside_code(markdown):
        return set()
    return {mention.login for mention in render(markdown).mentions(policy)}


# A code element cmark made: its text is escaped, so it holds no tag.
_CMARK_CODE = re.compile(r"<code(?: [^<>]*)?>[^<]*</code>")
# What shows as an "@" on the page: the character, or an entity for it.
_SHOWS_AT = re.compile(r"@|&#0*64|&#[xX]0*40|&commat", re.IGNORECASE)


def _no_at_outside_code(markdown: str) -> bool:
    """Whether the page of ``markdown`` shows no "@" outside code, so that a policy
    skipping code finds no mention in it, told from cmark's HTML without building the
    page. Only for a text that writes no HTML ("<" absent): then every element is one
    cmark made, code is trusted (``Rendering.code_trusted``) and its text holds no tag.
    A mention needs its "@" in one text node outside code."""
    if "<" in markdown:
        return False
    return _SHOWS_AT.search(_CMARK_CODE.sub("", html(markdown))) is None


def mentions_of(markdown: str | None, login: str, policy: MentionPolicy) -> list[Mention]:
    """Each mention of ``login`` ``policy`` finds in ``markdown``, in order."""
    if not markdown or not _may_mention(markdown):
        return []
    wanted = login.lower()
    return [m for m in render(markdown).mentions(policy, login) if m.login == wanted]


def shown_prose(markdown: str | None, policy: MentionPolicy = TRIGGERS) -> str:
    """The text GitHub shows of ``markdown``, block by block, without what ``policy`` finds
    no mention in (code, quotes, links): for readers of words after a mention."""
    if not markdown:
        return ""
    page = render(markdown)
    out: dict[int, str] = {}
    for run in page.runs:
        out[run.line] = out.get(run.line, "") + ("" if page.skips(policy, run) else run.text)
    return "\n".join(out.values())


def _may_mention(markdown: str) -> bool:
    """A mention needs an "@" in the page: the character, or an entity for it."""
    return "@" in markdown or "&" in markdown


def neutralise_mentions(markdown: str, logins: set[str] | None) -> str:
    """Drop every spelling of the "@" of each mention of ``logins`` (lowercase; of every
    login when None), in code or not. What this cannot see (an "@" parted from its login
    by a tag or a comment) callers find with ``mentioned_logins`` and refuse."""
    pattern = NOTIFIES.source_pattern()

    def drop(match: re.Match[str]) -> str:
        who = match.group(1)
        keep = logins is not None and who.lower().split("/")[0] not in logins
        return match.group(0) if keep else who

    while True:  # "@@bot" would otherwise leave "@bot" behind
        changed = pattern.sub(drop, markdown)
        if changed == markdown:
            return markdown
        markdown = changed
