"""An independent reading of what github.com makes of a body, for the tests.

cmark-gfm renders it (GitHub's own parser, raw HTML kept); html5lib, the WHATWG
parsing algorithm in pure Python, builds the page a browser would build; the walk
then reads it as html-pipeline's mention filter does: text nodes outside ``pre``,
``code``, ``a``, ``style`` and ``script`` are searched with GitHub's mention pattern
(``(?:^|\\W)@login``). HTML comments hide what they hold, and a closed ``<details>``
(or a ``hidden`` element) folds all but its summary. Written apart from
``tusk.text.markdown`` (another HTML parser, another walk) so the two can disagree.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from xml.etree.ElementTree import Element

import cmarkgfm
import html5lib
from cmarkgfm.cmark import Options

# html-pipeline's MentionFilter.MentionPattern, and the elements it does not look into.
MENTION = re.compile(r"(?:^|[^A-Za-z0-9_])@([a-z0-9][a-z0-9-]*)(?!/)", re.IGNORECASE)
IGNORED = {"pre", "code", "a", "style", "script"}
MAX_LOGIN = 39  # GitHub's longest username


@dataclass
class Page:
    nodes: list[tuple[str, bool, bool]] = field(default_factory=list)  # text, linkable, shown
    links: list[tuple[str, str | None]] = field(default_factory=list)  # shown link text, href


def _tag(element: Element) -> str:
    return element.tag.rsplit("}", 1)[-1] if isinstance(element.tag, str) else ""


def _texts(root: Element) -> Iterator[tuple[str, list[Element]]]:
    """(text, its ancestors) in document order; a comment's text is hidden, its tail not."""
    stack: list[tuple[str | Element, list[Element]]] = [(root, [])]
    while stack:
        node, above = stack.pop()
        if isinstance(node, str):
            yield node, above
            continue
        if node.tail:
            stack.append((node.tail, above))
        if not isinstance(node.tag, str):
            continue
        inner = [*above, node]
        stack.extend((child, inner) for child in reversed(list(node)))
        if node.text:
            stack.append((node.text, inner))


def page(body: str) -> Page:
    rendered = cmarkgfm.github_flavored_markdown_to_html(body, options=Options.CMARK_OPT_UNSAFE)
    root = html5lib.parse(rendered, namespaceHTMLElements=False)
    found = Page()
    body_element = root.find("body")
    for text, ancestors in _texts(body_element) if body_element is not None else ():
        tags = [_tag(a) for a in ancestors]
        shown = not any(
            "hidden" in a.attrib
            or (
                _tag(a) == "details"
                and "open" not in a.attrib
                and tags[i + 1 : i + 2] != ["summary"]
            )
            for i, a in enumerate(ancestors)
        )
        found.nodes.append((text, not IGNORED.intersection(tags), shown))
        hrefs = [a.get("href") for a in ancestors if _tag(a) == "a"]
        if hrefs and shown and not {"pre", "code"}.intersection(tags):
            found.links.append((text, hrefs[-1]))
    return found


def notified(body: str) -> set[str]:
    """Logins GitHub links (and so notifies) in ``body``."""
    return {
        login.lower()
        for text, linkable, _ in page(body).nodes
        if linkable
        for login in MENTION.findall(text)
        if len(login) <= MAX_LOGIN  # the filter links only accounts that exist
    }


def shown_text(body: str) -> str:
    """What a reader sees without opening anything: the shown text nodes, joined."""
    return "".join(text for text, _, shown in page(body).nodes if shown)


def footer_line(bot: str, phrase: str = "go away") -> str:
    return (
        f"🤖 Posted by {bot}'s agent · run log · comment @{bot} {phrase} to remove the bot "
        "from your repositories"
    )


def shows_footer(body: str, *, bot: str, log_url: str) -> bool:
    """Whether a reader of ``body`` on github.com sees the run's footer line and its link."""
    found = page(body)
    shown = " ".join("".join(t for t, _, s in found.nodes if s).split())
    return footer_line(bot) in shown and ("run log", log_url) in found.links
