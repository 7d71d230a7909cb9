"""A claim's lease: a log issue whose run never reported progress can be taken over.

The run that owns a job's log issue reports progress as soon as it starts
(run-claude posts a ``progress`` comment, which later carries the live
status). A run can die between claiming and starting (a lost runner, a
cancel before the agent step): its claim would strand the job forever, since
every later delivery stops at it. So a later delivery that finds the claim
older than the lease (``limits.claim_lease_minutes``) and without progress
may take it over.

Taking over is a handshake on the claim's own comments, which GitHub orders
by id: the later delivery posts a ``takeover`` comment, then reads the
comments back; the claim's run posts its ``progress`` comment, then reads
them back too. Whichever of the two comes first decides for everyone: a
claim whose first such comment is a takeover is dead (its run stops when it
sees that), otherwise it lives. Only the bot's comments count.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from tusk.github import Gateway
from tusk.markers import first_marker, render_marker
from tusk.once import create_once, find_comment

ClaimStatus = Literal["alive", "dead", "silent"]


@dataclass(frozen=True)
class Lease:
    """How long a claim may stay without progress, measured at ``now``."""

    minutes: float
    now: datetime

    def expired(self, created_at: datetime | None) -> bool:
        if created_at is None:
            return False
        return created_at <= self.now - timedelta(minutes=self.minutes)


def status_of(comments: Iterable[dict[str, Any]], *, bot: str, jobid: str) -> ClaimStatus:
    """Pure: what the bot's first progress or takeover comment for ``jobid`` says."""
    ordered = sorted(comments, key=lambda comment: int(comment["id"]))
    for comment in ordered:
        author = str((comment.get("user") or {}).get("login") or "")
        if author.lower() != bot.lower():
            continue
        body = str(comment.get("body") or "")
        for kind in ("progress", "takeover"):
            marker = first_marker(body, kind)  # type: ignore[arg-type]
            if marker is not None and marker.get("jobid") == jobid:
                return "alive" if kind == "progress" else "dead"
    return "silent"


def claim_status(gateway: Gateway, repo: str, number: int, *, bot: str, jobid: str) -> ClaimStatus:
    comments = gateway.paginate(f"/repos/{repo}/issues/{number}/comments")
    return status_of(comments, bot=bot, jobid=jobid)


def _post_once(
    gateway: Gateway,
    repo: str,
    number: int,
    *,
    kind: Literal["progress", "takeover"],
    jobid: str,
    nonce: str,
    text: str,
    bot: str,
) -> dict[str, Any]:
    body = f"{render_marker(kind, {'jobid': jobid, 'nonce': nonce})}\n{text}"
    path = f"/repos/{repo}/issues/{number}/comments"
    return create_once(
        lambda: dict(gateway.post(path, json={"body": body}, may_repeat=False).body),
        lambda: find_comment(gateway, repo, number, kind=kind, nonce=nonce, bot=bot),
        sleep=gateway.sleep,
        what=f"the {kind} comment",
    )


def take_over(
    gateway: Gateway,
    repo: str,
    number: int,
    *,
    bot: str,
    jobid: str,
    nonce: str,
    lease_minutes: float,
) -> ClaimStatus:
    """Try to take over the silent claim ``number``: post a takeover comment, then see
    which came first. Returns ``dead`` when the takeover holds, ``alive`` when the
    claim's run reported progress first."""
    text = (
        f"No run reported progress on this job within {lease_minutes:g} minutes of this "
        "claim, so a later delivery of the job takes it over."
    )
    _post_once(
        gateway,
        repo,
        number,
        kind="takeover",
        jobid=jobid,
        nonce=nonce,
        text=text,
        bot=bot,
    )
    return claim_status(gateway, repo, number, bot=bot, jobid=jobid)


def report_progress(
    gateway: Gateway,
    repo: str,
    number: int,
    *,
    bot: str,
    jobid: str,
    nonce: str,
    text: str = "⏳ The agent run has started.",
) -> tuple[ClaimStatus, dict[str, Any]]:
    """The claim's run says it is alive. Returns ``alive``, or ``dead`` when a later
    delivery took the claim over first (the run must then stop), and the comment."""
    comment = _post_once(
        gateway, repo, number, kind="progress", jobid=jobid, nonce=nonce, text=text, bot=bot
    )
    return claim_status(gateway, repo, number, bot=bot, jobid=jobid), comment
