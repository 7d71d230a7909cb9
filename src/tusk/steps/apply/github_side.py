"""What the apply step reads from GitHub and writes there (through the gateway).

Read: the approval comment itself (never the dispatch's copy of it), the
approver's confirmed rights over each set (``tusk.github.rights``: write access
on every repository it writes to; for a discard, or the run's requester as its
log issue names them), the bot's previews on the thread,
each set's comments and verdicts on its log issue, the run's audit chain.
Written: one reply on the thread per approval comment, a verdict on the log
issue, the preview brought up to date. Every create carries a nonce and is
looked for first (``tusk.github.once``); markers count only on the bot's content.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tusk.approval.staged_set import SetProblem, StagedSet, read_set
from tusk.contracts.models import ApprovalRequest
from tusk.github.gateway import Gateway, GitHubError
from tusk.github.once import post_marked_comment
from tusk.github.rights import Rights, confirmed_rights
from tusk.steps.apply.decide import Comment, Pending, SetState, touched_repos
from tusk.text.commands import approval_command
from tusk.text.markers import first_marker, parse_markers, render_marker


def read_comment(gateway: Gateway, request: ApprovalRequest, *, bot: str) -> Comment:
    data = gateway.get(f"/repos/{request.repo}/issues/comments/{request.comment_id}")
    body = str(data.get("body") or "")
    return Comment(
        author=str((data.get("user") or {}).get("login") or ""),
        command=approval_command(body, bot=bot),
        edited=bool(data.get("updated_at")) and data.get("updated_at") != data.get("created_at"),
    )


def requester_of(gateway: Gateway, staged: StagedSet, *, bot: str) -> str | None:
    """Who asked for the set's run, as the job marker of its log issue (the bot's) says."""
    try:
        issue = gateway.get(f"/repos/{staged.control_repo}/issues/{staged.log_issue_number}")
    except GitHubError:
        return None
    if str((issue.get("user") or {}).get("login") or "").lower() != bot.lower():
        return None
    found = (first_marker(str(issue.get("body") or ""), "job") or {}).get("requester")
    return found if isinstance(found, str) else None


def rights_over(
    gateway: Gateway,
    waiting: Iterable[Waiting],
    *,
    author: str,
    verb: str,
    thread_repo: str,
    bot: str,
    control_repo: str,
) -> dict[str, Rights]:
    """``author``'s confirmed rights over each set that waits, by digest: write access on
    every repository it writes to; a discard also lets the run's requester."""
    found: dict[str, Rights] = {}
    for item in waiting:
        if item.pending.state != "waiting":
            continue
        staged = item.staged
        repos = (
            touched_repos(staged, bot=bot, control_repo=control_repo) if staged else [thread_repo]
        )
        discard = verb == "discard" and staged is not None
        found[item.pending.digest] = confirmed_rights(
            gateway,
            author,
            repos=repos,
            requester=requester_of(gateway, staged, bot=bot) if discard and staged else None,
            requester_may=discard,
        )
    return found


def _by_bot(items: Iterable[dict[str, Any]], bot: str) -> list[dict[str, Any]]:
    return [
        i for i in items if str((i.get("user") or {}).get("login") or "").lower() == bot.lower()
    ]


@dataclass(frozen=True)
class Waiting:
    """A previewed set: its preview comment, its log issue comments, its state."""

    pending: Pending
    preview: dict[str, Any]
    log_comments: list[dict[str, Any]]
    staged: StagedSet | None
    problem: str = ""


def previews(gateway: Gateway, request: ApprovalRequest, *, bot: str) -> list[Waiting]:
    path = f"/repos/{request.repo}/issues/{request.number}/comments"
    found = []
    for comment in _by_bot(gateway.paginate(path), bot):
        for marker in parse_markers(str(comment.get("body") or ""), "preview"):
            found.append(_waiting(gateway, comment, marker, bot=bot))
    return found


def _waiting(
    gateway: Gateway, preview: dict[str, Any], marker: dict[str, Any], *, bot: str
) -> Waiting:
    digest = str(marker.get("digest", ""))
    path = f"/repos/{marker.get('control_repo')}/issues/{int(marker.get('log', 0))}/comments"
    log_comments = _by_bot(gateway.paginate(path), bot)
    state: SetState = "waiting"
    for comment in log_comments:
        for verdict in parse_markers(str(comment.get("body") or ""), "verdict"):
            if verdict.get("digest") == digest and verdict.get("state") in ("applied", "discarded"):
                state = verdict["state"]
    try:
        staged: StagedSet | None = read_set(log_comments, digest=digest, bot=bot)
        problem = ""
    except SetProblem as error:
        staged, problem = None, str(error)
    pending = Pending(digest, state, staged.expires_at if staged else None)
    return Waiting(pending, preview, log_comments, staged, problem)


def post_once(
    gateway: Gateway, repo: str, number: int, body: str, *, key: str, bot: str
) -> dict[str, Any]:
    """A bot comment with a ``verdict`` marker whose ``nonce`` is ``key``, posted once."""
    marked = f"{render_marker('verdict', {'nonce': key})}\n{body}"
    return post_marked_comment(
        gateway,
        repo,
        number,
        marked,
        kind="verdict",
        nonce=key,
        bot=bot,
        look_first=True,
        what=f"the reply on {repo}#{number}",
    )


def record_verdict(
    gateway: Gateway, staged: StagedSet, *, digest: str, state: str, body: str, key: str, bot: str
) -> dict[str, Any]:
    """The set's verdict (applied, discarded, failed) on its log issue, once per key."""
    marked = (
        render_marker("verdict", {"nonce": key, "digest": digest, "state": state}) + "\n" + body
    )
    repo, number = staged.control_repo, staged.log_issue_number
    return post_marked_comment(
        gateway,
        repo,
        number,
        marked,
        kind="verdict",
        nonce=key,
        bot=bot,
        look_first=True,
        what="the verdict on the log issue",
    )


def update_preview(gateway: Gateway, repo: str, preview: dict[str, Any], status: str) -> None:
    """Put the set's outcome at the top of its preview (under its marker)."""
    body = str(preview.get("body") or "")
    marker, _, rest = body.partition("\n")
    if rest.startswith("> **"):  # an earlier outcome: replaced, not stacked
        rest = rest.split("\n\n", 1)[-1]
    gateway.patch(
        f"/repos/{repo}/issues/comments/{preview['id']}",
        json={"body": f"{marker}\n> **{status}**\n\n{rest}"},
    )
