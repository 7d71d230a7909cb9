"""Whether an approval command may act, and on which set (pure).

Fail closed: only a comment GitHub shows as written by the requester, never
edited since, holding the verb now, naming a set that waits (digest given, or
the one set pending on the thread), not expired, discarded or applied, may
act; and only on rights GitHub confirms (``tusk.github.rights``): an apply
needs an allowed approver with write access to every repository the set
writes to (``touched_repos``: the thread's and each target of
``agent.write_repos``), a discard that or the run's requester. Anything else
is a refusal with its reason, said on the thread.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from tusk.approval.staged_set import StagedSet, normal_digest
from tusk.contracts.models import is_valid_repo
from tusk.github.rights import Rights
from tusk.text.commands import ApprovalCommand

SetState = Literal["waiting", "applied", "discarded", "failed"]


@dataclass(frozen=True)
class Comment:
    """The approval comment as GitHub shows it now."""

    author: str
    command: ApprovalCommand | None
    edited: bool


@dataclass(frozen=True)
class Pending:
    """A set the bot previewed on the thread, and what became of it."""

    digest: str
    state: SetState = "waiting"
    expires_at: datetime | None = None


@dataclass(frozen=True)
class Verdict:
    act: Literal["apply", "discard", "refuse"]
    digest: str = ""
    reason: str = ""


def refuse(reason: str) -> Verdict:
    return Verdict("refuse", reason=reason)


def listed(author: str, allowed: Sequence[str]) -> str | None:
    """Why ``author`` may not approve, or None when they are one of the approvers."""
    if author.lower() not in {login.lower() for login in allowed}:
        return f"{author} is not one of the users allowed to approve (agent.approvers)"
    return None


def touched_repos(staged: StagedSet, *, bot: str, control_repo: str) -> list[str]:
    """Every repository the set writes to, the bot's own fork and the control repository
    aside: the thread's, and each ``agent.write_repos`` target among its writes."""
    repos: dict[str, str] = {staged.repo.lower(): staged.repo}
    for operation in staged.operations:
        named = operation.args.get("repo")
        repo = named if isinstance(named, str) and is_valid_repo(named) else operation.target
        if not is_valid_repo(repo) or repo.lower() == control_repo.lower():
            continue
        if repo.split("/", 1)[0].lower() != bot.lower():
            repos.setdefault(repo.lower(), repo)
    return list(repos.values())


def decide(
    comment: Comment,
    *,
    actor: str,
    allowed: Sequence[str],
    rights: Mapping[str, Rights],
    pending: Sequence[Pending],
    now: datetime,
) -> Verdict:
    """What the approval comment may do, from what GitHub shows; ``rights`` holds the
    author's confirmed rights over each set by its digest."""
    if comment.author.lower() != actor.lower():
        return refuse(f"the comment is by {comment.author}, not {actor}")
    if comment.edited:
        return refuse("the comment was edited after it was posted; post a new one to approve")
    command = comment.command
    if command is None:
        return refuse("the comment no longer says `apply` or `discard` to the bot")
    not_listed = listed(comment.author, allowed)
    if command.verb == "apply" and not_listed:
        return refuse(not_listed)
    target = _target(command, pending)
    if isinstance(target, Verdict):
        return target
    if target.state != "waiting":
        return refuse(f"the set {target.digest} was already {target.state}; it cannot be applied")
    granted = rights.get(target.digest)
    if granted is None:
        return refuse(f"{comment.author}'s rights over the set {target.digest} were not read")
    if not granted.allowed:
        return refuse(granted.refusal().rstrip("."))
    if command.verb == "discard":
        if not_listed and not granted.requester:
            return refuse(not_listed)
        return Verdict("discard", target.digest)
    if target.expires_at is not None and now >= target.expires_at:
        return refuse(
            f"the set {target.digest} expired on {target.expires_at:%Y-%m-%d %H:%M} UTC; "
            "ask the bot again to have the work redone"
        )
    return Verdict("apply", target.digest)


def _target(command: ApprovalCommand, pending: Sequence[Pending]) -> Pending | Verdict:
    if command.digest is not None:
        digest = normal_digest(command.digest)
        found = [p for p in pending if p.digest == digest]
        if not found:
            return refuse(f"no staged set with digest {digest} waits on this thread")
        return found[0]
    waiting = [p for p in pending if p.state == "waiting"]
    if len(waiting) == 1:
        return waiting[0]
    if not waiting:
        return refuse("no staged set waits on this thread")
    return refuse(f"{len(waiting)} staged sets wait on this thread: name the digest to apply")
