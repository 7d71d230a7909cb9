"""A blocklist issue read back: its body's list plus the change comments after the
body's ``through``, or, when the body cannot be read, the list its own change
comments make (the bot's only). Reads only; ``tusk.issues.state`` writes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tusk.contracts.models import Blocklist
from tusk.github.gateway import Gateway
from tusk.issues.blocklist_codec import (
    BlocklistSnapshot,
    apply_change,
    parse_blocklist_body,
    parse_change,
    rebuild_blocklist,
)
from tusk.issues.state_codec import StateError, StateIssue
from tusk.text.markers import first_marker


@dataclass(frozen=True)
class SnapshotReader:
    """Reads the blocklist issues of ``repo``; ``predecessor`` names the issue one
    continues (the store's lookup), for a rebuild that has no snapshot to start at."""

    gateway: Gateway
    repo: str
    bot: str
    trusted: tuple[str, ...]
    per_page: int
    predecessor: Callable[[StateIssue], StateIssue | None]

    def snapshot(self, issue: StateIssue) -> BlocklistSnapshot:
        """The blocklist of ``issue``: its body's list plus the change comments after its
        ``through``; rebuilt from the change comments when the body cannot be read."""
        number = issue.number
        item = self.gateway.get(f"/repos/{self.repo}/issues/{number}")
        is_open = item.get("state") != "closed"
        try:
            if issue.damaged or first_marker(item.get("body"), "state") is None:
                raise StateError("The blocklist issue lost its marker", "")
            base, through = parse_blocklist_body(item.get("body"))
        except StateError:
            return self.rebuild(issue, is_open=is_open)
        params = {"since": through.at} if through else {}
        comments = self.gateway.paginate(
            f"/repos/{self.repo}/issues/{number}/comments", params=params, per_page=self.per_page
        )
        pending = []
        for comment in comments:
            if through is not None and int(comment["id"]) <= through.id:
                continue
            change = parse_change(comment, bot=self.bot, trusted=self.trusted)
            if change is not None:
                pending.append((int(comment["id"]), str(comment["created_at"]), change))
        pending.sort(key=lambda p: p[0])
        blocklist = base
        for _, _, change in pending:
            blocklist = apply_change(blocklist, change)
        return BlocklistSnapshot(blocklist=blocklist, pending=tuple(pending), open=is_open)

    def rebuild(self, issue: StateIssue, *, is_open: bool) -> BlocklistSnapshot:
        """The list a damaged blocklist issue's own change comments make (the bot's only):
        from its last snapshot, or on top of its predecessor's list when it has none."""
        comments = self.gateway.paginate(
            f"/repos/{self.repo}/issues/{issue.number}/comments", per_page=self.per_page
        )
        changes = []
        for comment in comments:
            change = parse_change(comment, bot=self.bot, trusted=self.trusted)
            if change is not None:
                changes.append((int(comment["id"]), str(comment["created_at"]), change))
        changes.sort(key=lambda c: c[0])
        base = Blocklist()
        if not any(change.snapshot for _, _, change in changes):
            previous = self.predecessor(issue)
            if previous is not None:
                base = self.snapshot(previous).blocklist
        return BlocklistSnapshot(
            blocklist=rebuild_blocklist(changes, base),
            pending=tuple(changes),
            open=is_open,
            rebuilt=True,
        )
