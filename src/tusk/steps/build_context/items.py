"""build-context's items: one node of the thread as the model will read it.

Text from GitHub is neutralised here by ``tusk.text.neutralise`` (the same function
the MCP server's read tools use) and flagged: untrusted authors, hidden
content, text written or edited after the mention. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from tusk.contracts.config import Settings
from tusk.contracts.raw_context import Comment, RawContext, Review, Thread
from tusk.steps.build_context.views import EntryView, ItemView
from tusk.text.neutralise import Trust, neutralise, one_line

# What the context shows as one item: the thread's (or a linked issue's) description, a
# comment, a review or a review comment.
Node = Thread | Comment | Review


def fmt_time(moment: datetime | None) -> str:
    if moment is None:
        return "unknown time"
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M UTC")


_SAFE_URL = re.compile(r"^https?://[^\s()<>\"'`\\]+$")


def safe_url(url: str | None) -> str | None:
    """A URL fit to put inside a markdown link, or None."""
    return url if url and _SAFE_URL.match(url) else None


def trust_of(settings: Settings, raw: RawContext) -> Trust:
    return Trust.of((*settings.allowed_users, settings.bot), raw.collaborators)


def time_flags(node: Node, trigger_time: datetime) -> tuple[str, ...]:
    """Mark text written or edited after the mention: the requester never saw it.

    An issue's or pull request's ``updated_at`` moves with every comment,
    label, push or review, so for a thread only ``last_edited_at`` tells an
    edit of its text; a comment's ``updated_at`` moves only when it is edited.
    """
    if node.created_at is not None and node.created_at > trigger_time:
        return ("written after the mention",)
    edited = node.last_edited_at if isinstance(node, Thread) else node.updated_at
    if edited is not None and edited > trigger_time:
        return ("edited after the mention",)
    return ()


@dataclass(frozen=True)
class ItemFactory:
    trust: Trust
    trigger_time: datetime

    def text(self, value: str | None) -> str:
        """A one-line field (title, label, branch): a line break in it could forge a heading."""
        return one_line(value)

    def item(
        self,
        node: Node,
        kind: str,
        *,
        detail: str = "",
        is_trigger: bool = False,
        body: str | None = None,
    ) -> ItemView:
        cleaned = neutralise(
            node.body if body is None else body,
            trusted=self.trust.trusted(node.author, node.author_association),
        )
        flags = [*cleaned.author_flags]
        if not is_trigger:
            flags.extend(time_flags(node, self.trigger_time))
        flags.extend(cleaned.content_flags)
        return ItemView(
            kind=kind,
            author=node.author,
            url=safe_url(node.html_url),
            when=fmt_time(node.created_at),
            detail=self.text(detail) if detail else "",
            flags=tuple(flags),
            text=cleaned.text,
            is_trigger=is_trigger,
        )


def is_node(node: Comment | Review, trigger_id: str) -> bool:
    """Whether ``node`` is the one the trigger names (REST id or node id)."""
    return node.node_id == trigger_id or (node.id is not None and str(node.id) == trigger_id)


def _as_rest_id(trigger_id: str) -> int | None:
    """The REST id whose decimal spelling ``trigger_id`` is, or None."""
    try:
        number = int(trigger_id)
    except ValueError:
        return None
    return number if str(number) == trigger_id else None


def index_of(nodes: Sequence[Comment], trigger_id: str) -> int | None:
    """The first of ``nodes`` the trigger names, by REST id or node id (``is_node``,
    with the id compared as a number: a thread may hold tens of thousands)."""
    number = _as_rest_id(trigger_id)
    for index, node in enumerate(nodes):
        if node.node_id == trigger_id or (number is not None and node.id == number):
            return index
    return None


class Entry(Protocol):
    @property
    def text(self) -> str: ...

    @property
    def created_at(self) -> datetime: ...

    @property
    def url(self) -> str: ...


def entry_views(entries: Sequence[Entry]) -> tuple[EntryView, ...]:
    return tuple(
        EntryView(
            text=neutralise(e.text).text,
            when=fmt_time(e.created_at),
            url=safe_url(e.url),
        )
        for e in entries
    )
