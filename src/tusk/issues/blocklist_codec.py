"""The pure codec of the blocklist issue: its change comments, its body (readable
lists plus a machine-readable block) and the folding of changes into a list.

``tusk.issues.blocklist_snapshot`` reads an issue through it;
``tusk.issues.state.StateStore.update_blocklist`` writes through it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tusk.contracts.models import BlockedRepo, BlockedUser, Blocklist, StrictModel
from tusk.issues.state_codec import (
    MAX_BODY_CHARS,
    TITLES,
    StateError,
    state_marker,
    trusted_author,
)
from tusk.text.markers import first_marker, render_marker

_DATA_OPEN = "```json tusk-blocklist\n"
_DATA_RE = re.compile(r"^```json tusk-blocklist\n(?P<json>.*?)\n```$", re.S | re.M)


class BlocklistChange(StrictModel):
    """One blocklist edit as recorded in its comment: what to add and what to remove.

    ``snapshot`` marks the whole list carried over by a rollover: rebuilding an
    issue from its comments starts at its last snapshot. ``nonce`` identifies
    the comment, so a change whose answer was lost is found, not posted twice."""

    add_repos: tuple[BlockedRepo, ...] = ()
    remove_repos: tuple[str, ...] = ()
    add_users: tuple[BlockedUser, ...] = ()
    remove_users: tuple[str, ...] = ()
    snapshot: bool = False
    nonce: str | None = None

    def is_empty(self) -> bool:
        return not (self.add_repos or self.remove_repos or self.add_users or self.remove_users)

    @classmethod
    def whole(cls, blocklist: Blocklist) -> BlocklistChange:
        """The snapshot of ``blocklist``: applied to an empty list, it gives the list."""
        return cls(add_repos=blocklist.repos, add_users=blocklist.users, snapshot=True)


@dataclass(frozen=True)
class Through:
    """The last change comment folded into a blocklist body."""

    id: int
    at: str


@dataclass(frozen=True)
class BlocklistSnapshot:
    blocklist: Blocklist  # the body's list with every pending change applied
    pending: tuple[tuple[int, str, BlocklistChange], ...]  # (comment id, created_at, change)
    open: bool = True  # a closed blocklist issue has been rolled over
    rebuilt: bool = False  # the body was unreadable: the list comes from the change comments


def rebuild_blocklist(
    changes: Iterable[tuple[int, str, BlocklistChange]], base: Blocklist
) -> Blocklist:
    """Pure: the list an issue's change comments make, from its last snapshot (or from
    ``base``, its predecessor's list, when it has none), in comment order."""
    ordered = sorted(changes, key=lambda change: change[0])
    start = max((i for i, (_, _, c) in enumerate(ordered) if c.snapshot), default=None)
    blocklist = base if start is None else Blocklist()
    for _, _, change in ordered[start or 0 :]:
        blocklist = apply_change(blocklist, change)
    return blocklist


def diff_blocklist(old: Blocklist, new: Blocklist) -> BlocklistChange:
    old_repos = {entry.repo.lower() for entry in old.repos}
    new_repos = {entry.repo.lower() for entry in new.repos}
    old_users = {entry.user.lower() for entry in old.users}
    new_users = {entry.user.lower() for entry in new.users}
    return BlocklistChange(
        add_repos=tuple(e for e in new.repos if e.repo.lower() not in old_repos),
        remove_repos=tuple(e.repo for e in old.repos if e.repo.lower() not in new_repos),
        add_users=tuple(e for e in new.users if e.user.lower() not in old_users),
        remove_users=tuple(e.user for e in old.users if e.user.lower() not in new_users),
    )


def apply_change(blocklist: Blocklist, change: BlocklistChange) -> Blocklist:
    """Idempotent: applying a change twice equals applying it once."""
    gone_repos = {name.lower() for name in change.remove_repos}
    gone_users = {name.lower() for name in change.remove_users}
    repos = [e for e in blocklist.repos if e.repo.lower() not in gone_repos]
    users = [e for e in blocklist.users if e.user.lower() not in gone_users]
    for repo in change.add_repos:
        if all(e.repo.lower() != repo.repo.lower() for e in repos):
            repos.append(repo)
    for user in change.add_users:
        if all(e.user.lower() != user.user.lower() for e in users):
            users.append(user)
    return Blocklist(repos=tuple(repos), users=tuple(users))


def change_comment_body(change: BlocklistChange, *, note: str = "") -> str:
    data = change.model_dump(mode="json", exclude_defaults=True)
    if change.snapshot:
        summary = (
            f"Blocklist snapshot: {len(change.add_repos)} repositories and "
            f"{len(change.add_users)} users carried over."
        )
        tail = f"\n\n{_one_line(note)}" if note else ""
        return f"{render_marker('blocklist-change', data)}\n{summary}{tail}\n"
    lines = [render_marker("blocklist-change", data), "Blocklist change:"]
    lines += [f"- block repository `{e.repo}`" for e in change.add_repos]
    lines += [f"- block every repository of `{e.user}`" for e in change.add_users]
    lines += [f"- unblock repository `{name}`" for name in change.remove_repos]
    lines += [f"- unblock user `{name}`" for name in change.remove_users]
    if note:
        lines.append(f"\n{_one_line(note)}")
    return "\n".join(lines) + "\n"


def parse_change(
    comment: dict[str, Any], *, bot: str, trusted: Iterable[str] = ()
) -> BlocklistChange | None:
    if not trusted_author(comment, bot=bot, trusted=trusted):
        return None
    marker = first_marker(comment.get("body"), "blocklist-change")
    if marker is None:
        return None
    try:
        return BlocklistChange.model_validate(marker)
    except ValueError:
        return None


def _one_line(text: str) -> str:
    return " ".join(text.split()).replace("`", "'")


def _link(url: str) -> str:
    # Only plain https links reach the body; anything else could break the list.
    if re.fullmatch(r"https?://[^\s<>()\[\]`]+", url):
        return f" ([request]({url}))"
    return ""


def render_blocklist_body(
    blocklist: Blocklist,
    *,
    generation: int,
    through: Through | None,
    previous: int | None,
    nonce: str | None = None,
) -> str:
    """The blocklist issue body: readable lists plus the machine-readable block."""
    data = {"blocklist": blocklist.model_dump(mode="json"), "through": None}
    if through is not None:
        data["through"] = {"id": through.id, "at": through.at}
    # JSON never needs a raw backtick, so the fence cannot be closed from inside.
    payload = json.dumps(data, indent=1, sort_keys=True).replace("`", "\\u0060")
    head = [
        state_marker("blocklist", generation, previous, nonce),
        f"# {TITLES['blocklist']}" + (f" (part {generation})" if generation > 1 else ""),
        "",
        "The bot does nothing in the repositories below, nor in any repository owned by the",
        "users below (`@bot go away`). Tusk edits this issue itself: each change is first",
        "recorded as a comment, then folded into this body. The JSON block at the end is what",
        "Tusk reads; to unblock by hand, remove the entry from both the list and the block.",
    ]
    if previous is not None:
        head.append(f"\nContinues #{previous}.")
    repos = [
        f"- `{e.repo}`, blocked by `{e.by}` on {e.at:%Y-%m-%d}{_link(e.source_url)}"
        for e in blocklist.repos
    ] or ["- none"]
    users = [
        f"- `{e.user}`, since {e.at:%Y-%m-%d}{_link(e.source_url)}" for e in blocklist.users
    ] or ["- none"]
    tail = ["", "<details><summary>Machine-readable</summary>", "", _DATA_OPEN + payload, "```"]
    tail += ["", "</details>", ""]
    body = "\n".join([*head, "", "## Repositories", *repos, "", "## Users", *users, *tail])
    if len(body) > MAX_BODY_CHARS:  # keep the machine block; shorten the readable part
        short = [
            f"{len(blocklist.repos)} repositories and {len(blocklist.users)} users; see below."
        ]
        body = "\n".join([*head, "", *short, *tail])
    return body


def parse_blocklist_body(body: str | None) -> tuple[Blocklist, Through | None]:
    match = _DATA_RE.search((body or "").replace("\r\n", "\n"))
    if match is None:
        raise StateError(
            "The blocklist issue has no machine-readable block",
            "Restore the body from its edit history, or close the issue so Tusk opens a new one.",
        )
    try:
        data = json.loads(match.group("json"))
        blocklist = Blocklist.model_validate(data["blocklist"])
        raw = data.get("through")
        through = Through(id=int(raw["id"]), at=str(raw["at"])) if raw else None
    except (ValueError, KeyError, TypeError) as error:
        raise StateError(
            "The blocklist issue's machine-readable block is broken",
            f"Fix the JSON in the issue body (or restore it from its edit history): {error}",
        ) from None
    return blocklist, through
