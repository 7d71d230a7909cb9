"""Who may do what on the local GitHub beyond its tokens' scopes: the admin API's
header and secret, the routes the runner reaches with its own credentials, and the
writes Tusk's read-only discipline still lets a read-only token make."""

from __future__ import annotations

from typing import Any

INBOX_OPERATIONS = frozenset(
    {
        "activity/mark-thread-as-read",
        "activity/mark-thread-as-done",
        "activity/mark-notifications-as-read",
        "activity/mark-repo-notifications-as-read",
    }
)
# Reactions a read-only token may still add: the poller acknowledges a mention with
# its bot token (Tusk's "read-only" is its own discipline; GitHub lets a classic
# token with `repo` react anywhere its user may).
READ_ONLY_REACTIONS = frozenset(
    {
        "reactions/create-for-issue-comment",
        "reactions/create-for-issue",
        "reactions/create-for-pull-request-review-comment",
    }
)
# The poller's one comment: its answer on a thread whose mention is over a limit
# across runs (tusk.github.limit_reply), told by the marker it opens with. Any other
# comment by a read-only token is still refused.
LIMIT_ANSWER_OPENING = "<!-- tusk:limit "
# And its record of a follow-up on the log issue of the run in flight (tusk.issues.followups).
FOLLOWUP_OPENING = "<!-- tusk:followup "
# And, for a run that died (tusk.issues.stale_runs), its note on the log issue and the
# run's status comment on the thread rewritten to say so.
STALE_OPENING = "<!-- tusk:stale "
STATUS_OPENING = "<!-- tusk:status "


def read_only_may(operation_id: str, body: Any) -> bool:
    """Whether Tusk's read-only discipline lets a read-only token make this write."""
    if operation_id in INBOX_OPERATIONS or operation_id in READ_ONLY_REACTIONS:
        return True
    text = body.get("body") if isinstance(body, dict) else None
    if not isinstance(text, str):
        return False
    if operation_id == "issues/update-comment":
        return text.startswith(STATUS_OPENING)
    return operation_id == "issues/create-comment" and text.startswith(
        (LIMIT_ANSWER_OPENING, FOLLOWUP_OPENING, STALE_OPENING)
    )


ADMIN_HEADER = "X-Tusk-Admin"
ADMIN_SECRET_ENV = "TUSK_SANDBOX_ADMIN_SECRET"


def is_runner_route(path: str) -> bool:
    """Artifact storage, which the workflows' upload step uses with the runner's own
    credentials as on GitHub; every other ``/_sandbox/`` route is admin-only."""
    return path.startswith(("/_sandbox/artifacts/", "/_sandbox/blobs/"))
