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

Comment listings can lag a write (only a comment's own URL is read-after-
write), so each side decides only once the listing shows the comment it just
posted: a listing that shows it shows every earlier one, the rival's
included. Without that, a run whose listing still hid an earlier takeover
would go on while the delivery that took over goes on too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from tusk.errors import UserError
from tusk.github.gateway import Gateway
from tusk.github.once import post_marked_comment
from tusk.text.markers import first_marker, render_marker

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
            marker = first_marker(body, kind)
            if marker is not None and marker.get("jobid") == jobid:
                return "alive" if kind == "progress" else "dead"
    return "silent"


# How long a side waits for the listing to show the comment it just posted.
LISTING_PATIENCE_SECONDS = 120.0


class HandshakeUndecided(UserError):
    """The comment listing never showed this run's own progress or takeover comment, so
    which came first cannot be told."""


def claim_status(
    gateway: Gateway,
    repo: str,
    number: int,
    *,
    bot: str,
    jobid: str,
    own: int | None = None,
    patience: float = LISTING_PATIENCE_SECONDS,
) -> ClaimStatus:
    """The claim's status from its comments. With ``own`` (the id of the comment this
    run just posted) it is decided only once the listing shows that comment; raises
    ``HandshakeUndecided`` when it does not within ``patience`` seconds."""
    path = f"/repos/{repo}/issues/{number}/comments"
    waited, delay = 0.0, 1.0
    while True:
        comments = list(gateway.paginate(path))
        if own is None or any(int(comment["id"]) == own for comment in comments):
            return status_of(comments, bot=bot, jobid=jobid)
        if waited >= patience:
            raise HandshakeUndecided(
                f"the comments of log issue {repo}#{number} did not show this run's own "
                f"comment {own} within {patience:.0f} s, so whether the job's claim or a "
                "takeover of it came first cannot be told",
                "Nothing ran. Re-run this workflow run once GitHub's comment listing has "
                "caught up, or mention the bot again.",
            )
        step = min(delay, patience - waited)
        gateway.sleep(step)
        waited += step
        delay = min(delay * 2, 15.0)


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
    return post_marked_comment(
        gateway, repo, number, body, kind=kind, nonce=nonce, bot=bot, what=f"the {kind} comment"
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
    comment = _post_once(
        gateway,
        repo,
        number,
        kind="takeover",
        jobid=jobid,
        nonce=nonce,
        text=text,
        bot=bot,
    )
    return claim_status(gateway, repo, number, bot=bot, jobid=jobid, own=int(comment["id"]))


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
    own = int(comment["id"])
    return claim_status(gateway, repo, number, bot=bot, jobid=jobid, own=own), comment
