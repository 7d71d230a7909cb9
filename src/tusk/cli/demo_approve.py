"""``tusk demo --approve``: the offline demo in approval mode, printed as it happens.

The run stages its writes; the demo shows the preview the bot left on the
thread and that nothing else was written; the maintainer answers
``@tusk-bot apply <digest>`` in a comment; the poller dispatches it as a
``tusk-approval`` event, which the go-away workflow's apply job plays under
``act``; the demo then shows what was made and the preview's outcome.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tusk.errors import UserError
from tusk.text.markers import first_marker

APPROVAL_CONFIG = {"approval": "required"}


def preview_on_thread(gateway: Any, repo: str, bot: str) -> dict[str, Any] | None:
    comments = gateway.paginate(f"/repos/{repo}/issues/1/comments")
    return next(
        (
            c
            for c in comments
            if c["user"]["login"] == bot and first_marker(c["body"], "preview") is not None
        ),
        None,
    )


def made_by_bot(gateway: Any, repo: str, bot: str) -> tuple[int, int]:
    """The agent's comments and pull requests in ``repo``: the bot's, less Tusk's own
    comments (the preview, the apply's verdict and the thread's status comment)."""
    comments = [
        c
        for c in gateway.paginate(f"/repos/{repo}/issues/1/comments")
        if c["user"]["login"] == bot
        and first_marker(c["body"], "preview") is None
        and first_marker(c["body"], "verdict") is None
        and first_marker(c["body"], "status") is None
    ]
    pulls = [
        p
        for p in gateway.paginate(f"/repos/{repo}/pulls", params={"state": "all"})
        if p["user"]["login"] == bot
    ]
    return len(comments), len(pulls)


def approve_and_apply(
    gateway: Any,
    *,
    repo: str,
    bot: str,
    say: Callable[[str], None],
    poll: Callable[[], None],
    dispatches: Callable[[], list[dict[str, Any]]],
    play: Callable[[dict[str, Any], int], None],
) -> dict[str, Any]:
    """Show the staged state, approve as the maintainer, apply; returns the preview after."""
    preview = preview_on_thread(gateway, repo, bot)
    if preview is None:
        raise UserError(
            "the run left no preview on the thread",
            "In approval mode the write-up posts one; read the log issue to see why not.",
        )
    digest = str(first_marker(preview["body"], "preview")["digest"])  # type: ignore[index]
    comments, pulls = made_by_bot(gateway, repo, bot)
    say(f"\n== Staged, not made: {comments} comment(s) and {pulls} pull request(s) by {bot}")
    say(f"== The preview on {repo}#1 ({preview['html_url']})\n{preview['body']}")
    if comments or pulls:
        raise UserError("the run wrote before approval", "Approval mode must stage every write.")
    before = len(dispatches())
    answer = f"@{bot} apply `{digest}`"
    posted = gateway.post(f"/repos/{repo}/issues/1/comments", json={"body": answer}).body
    say(f"\n== The maintainer approves ({posted['html_url']})\n{answer}")
    poll()
    sent = dispatches()[before:]
    approvals = [d for d in sent if d["event_type"] == "tusk-approval"]
    if not approvals:
        raise UserError("the poller did not dispatch the approval", "Its output is above.")
    say(f"The poller sent the approval as {len(approvals)} tusk-approval dispatch(es)")
    for number, dispatch in enumerate(approvals, start=before + 1):
        play(dispatch, number)
    comments, pulls = made_by_bot(gateway, repo, bot)
    say(f"\n== Applied: {comments} comment(s) and {pulls} pull request(s) by {bot} now")
    after = preview_on_thread(gateway, repo, bot) or {}
    status = str(after.get("body", "")).split("\n")[1:2]
    say(f"== The preview now says: {status[0] if status else '(nothing)'}")
    return after
