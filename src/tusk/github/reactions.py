"""Reactions on the trigger: what the requester sees of a run's life.

👀 when the poller dispatches the mention, 🚀 when the run completed, 😕 when it
failed. A comment, review comment or issue/PR body gets its reaction over REST;
discussions and reviews have no REST reaction route, so they get GraphQL's
``addReaction`` (a review's node id is looked up first). Both are idempotent on
GitHub: the same user and content make one reaction, so a retried or repeated
reaction never doubles.

A reaction is a courtesy: ``react`` never raises, it says whether it landed.
"""

from __future__ import annotations

import logging
from typing import Literal

from tusk.contracts.models import Trigger, TriggerType
from tusk.errors import TuskError
from tusk.github.gateway import Gateway

log = logging.getLogger(__name__)

Reaction = Literal["eyes", "rocket", "confused"]
ACKNOWLEDGED: Reaction = "eyes"
COMPLETED: Reaction = "rocket"
FAILED: Reaction = "confused"
GRAPHQL_CONTENT = {"eyes": "EYES", "rocket": "ROCKET", "confused": "CONFUSED"}
ADD_REACTION = """
mutation AddReaction($subject: ID!, $content: ReactionContent!) {
  addReaction(input: {subjectId: $subject, content: $content}) { reaction { content } }
}
"""


def rest_path(
    repo: str, trigger_type: TriggerType, trigger_id: str, number: int | None
) -> str | None:
    """The REST reactions route of a trigger, or None where REST has none."""
    base = f"/repos/{repo}"
    if trigger_type == "issue_comment":
        return f"{base}/issues/comments/{trigger_id}/reactions"
    if trigger_type == "review_comment":
        return f"{base}/pulls/comments/{trigger_id}/reactions"
    if trigger_type in ("issue_body", "pull_request_body") and number is not None:
        return f"{base}/issues/{number}/reactions"  # pull requests are issues here
    return None


def react(gateway: Gateway, *, repo: str, trigger: Trigger, content: Reaction) -> bool:
    """Add ``content`` to the trigger as the gateway's user; True when it is there."""
    try:
        path = rest_path(repo, trigger.type, trigger.id, trigger.number)
        if path is not None:
            gateway.post(path, json={"content": content})
            return True
        subject = trigger.id
        if trigger.type == "review":
            review = gateway.get(f"/repos/{repo}/pulls/{trigger.number}/reviews/{trigger.id}")
            subject = str(review["node_id"])
        gateway.graphql(ADD_REACTION, {"subject": subject, "content": GRAPHQL_CONTENT[content]})
        return True
    except (TuskError, KeyError, TypeError) as error:
        log.warning("could not react %s on %s: %s", content, trigger.url, error)
        return False


def ran_record(gateway: Gateway, *, repo: str, trigger: Trigger, bot: str) -> str | None:
    """Why the trigger says its job ran, or None: the bot's own 🚀 or 😕 on it.

    People remove only their own reactions (a reaction is its author's: GitHub's
    interface and the REST "Delete ... reaction" routes act for the authenticated
    user), so the bot's outlive a log issue someone deleted or transferred. Read
    over REST where the trigger has a reactions route; a trigger without one (a
    discussion, a review) or one that is gone answers None."""
    path = rest_path(repo, trigger.type, trigger.id, trigger.number)
    if path is None:
        return None
    try:
        found = {
            str(item.get("content"))
            for item in gateway.paginate(path)
            if str((item.get("user") or {}).get("login") or "").lower() == bot.lower()
        }
    except TuskError as error:
        log.warning("could not read the reactions on %s: %s", trigger.url, error)
        return None
    for content, emoji in ((COMPLETED, "🚀"), (FAILED, "😕")):
        if content in found:
            return (
                f"the bot's {emoji} on the trigger ({trigger.url}) says this job ran already, "
                "but its log issue cannot be found (deleted or transferred?)"
            )
    return None
