"""Read a body as GitHub renders it (markdown-it-py's gfm-like preset with task
lists) and find what would act on GitHub: raw HTML, link definitions, and
mentions or issue references standing in text rather than in code or a link."""

from __future__ import annotations

import re
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.tasklists import tasklists_plugin

# GitHub's own filters: @user, @org/team, #12, owner/repo#12, GH-12 in text.
THREAD_URL = re.compile(r"^https?://[^/]+/[\w.-]+/[\w.-]+/(?:issues|pull|discussions)/[0-9]+")
LIVE = re.compile(
    r"(?<![A-Za-z0-9_/])@[A-Za-z0-9][A-Za-z0-9-]*"
    r"|(?<![A-Za-z0-9_&])(?:[A-Za-z0-9][\w.-]*/[\w.-]+)?#[0-9]+\b"
    r"|\bGH-[0-9]+\b"
)


def gfm() -> MarkdownIt:
    return MarkdownIt("gfm-like").use(tasklists_plugin)


def parse(body: str) -> tuple[list[Token], dict[str, Any]]:
    env: dict[str, Any] = {}
    return gfm().parse(body, env), env


def top_level(tokens: list[Token]) -> list[tuple[str, str]]:
    return [(t.type, t.tag) for t in tokens if t.level == 0 and t.nesting != -1]


def live_text(tokens: list[Token]) -> list[str]:
    """Mentions and references GitHub would act on: in text, not in code or links; and
    bare thread URLs (autolinked, they become cross-references)."""
    found = []
    for token in tokens:
        if token.type != "inline":
            continue
        in_link = 0
        for child in token.children or []:
            if child.type == "link_open":
                href = str(child.attrs.get("href", ""))
                if child.markup == "linkify" and THREAD_URL.match(href):
                    found.append(href)
                in_link += 1
            elif child.type == "link_close":
                in_link -= 1
            elif child.type == "text" and not in_link:
                found += LIVE.findall(child.content)
    return found


def html(tokens: list[Token]) -> list[str]:
    """Raw HTML the page would carry (blocks and inline)."""
    found = [t.content for t in tokens if t.type == "html_block"]
    for token in tokens:
        found += [c.content for c in token.children or [] if c.type == "html_inline"]
    return found


def headings(tokens: list[Token]) -> list[tuple[str, int, str]]:
    """(tag, nesting level, text) of every heading."""
    out = []
    for index, token in enumerate(tokens):
        if token.type == "heading_open":
            out.append((token.tag, token.level, tokens[index + 1].content))
    return out
