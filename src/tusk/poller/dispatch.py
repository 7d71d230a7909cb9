"""Send work to the control repository (MISSION P7, P8, P5).

A task becomes one context document, encoded and split by the shard codec;
each shard is one ``repository_dispatch`` ``tusk-shard``. A command (go-away,
approval, undo) is its job's one event (``tusk.contracts.commands``). All go out with
the dispatch token. GitHub answers a
dispatch with 204 and nothing else counts as sent: PyGithub returns a bool
here and does not raise, so this code sends the request itself and checks.
"""

from __future__ import annotations

import logging
from typing import Any

from tusk.contracts.config import Settings
from tusk.contracts.models import SHARD_EVENT_TYPE, ContextDocument, TaskWork
from tusk.contracts.raw_context import RawContext
from tusk.errors import UserError
from tusk.github.gateway import Gateway, GitHubError
from tusk.poller.core import CommandWork
from tusk.shards import codec as shards

log = logging.getLogger(__name__)


class DispatchError(UserError):
    """A dispatch was not accepted; the thread stays unread so the next poll retries."""


def build_document(work: TaskWork, raw: RawContext) -> ContextDocument:
    """The context document. Its timestamp is the trigger's own time, not the clock's:
    re-sending an unchanged trigger after a crash then yields identical shards,
    which the merge accepts as duplicates."""
    trigger = work.trigger
    return ContextDocument(
        **dict(work), raw=raw, timestamp=trigger.updated_at or trigger.created_at
    )


def send(gateway: Gateway, repo: str, body: dict[str, Any]) -> None:
    """One ``repository_dispatch``; anything but 204 raises ``DispatchError``."""
    problems = shards.payload_limit_problems(body)
    if problems:
        raise DispatchError(f"dispatch to {repo} would break GitHub's limits", "; ".join(problems))
    try:
        response = gateway.request("POST", f"/repos/{repo}/dispatches", json=body)
    except GitHubError as error:
        raise DispatchError(
            f"repository_dispatch {body['event_type']} to {repo} failed: {error.title}",
            dispatch_hint(error),
        ) from error
    if response.status != 204:
        raise DispatchError(
            f"repository_dispatch {body['event_type']} to {repo} answered {response.status}",
            "GitHub accepts a dispatch with 204 only; the trigger stays unread and is retried.",
        )


def dispatch_hint(error: GitHubError) -> str:
    """What to do about a failed dispatch: blame the token only when it is the token's fault."""
    if error.cause in ("auth", "permission", "not_found"):
        return (
            "Check that TUSK_DISPATCH_TOKEN may write to the control repository "
            "(classic: repo; fine-grained: Contents write). The trigger stays unread and is "
            "retried."
        )
    if error.cause == "outage":
        return (
            "GitHub failed or could not be reached; the token is not at fault. The trigger "
            "stays unread and the next poll retries it."
        )
    return error.hint or "The trigger stays unread and the next poll retries it."


def dispatch_task(gateway: Gateway, settings: Settings, work: TaskWork, raw: RawContext) -> int:
    """Send the task's context as shards; return how many were sent."""
    document = build_document(work, raw)
    encoded = shards.encode_context(document.model_dump_json().encode("utf-8"))
    parts = shards.split_into_shards(work.jobid, encoded, settings.limits.shard_bytes)
    for shard in parts:
        send(gateway, settings.control_repo, shards.dispatch_body(shard))
    log.info("dispatched %s as %d shard(s) (%s)", work.jobid, len(parts), SHARD_EVENT_TYPE)
    return len(parts)


def dispatch_command(gateway: Gateway, settings: Settings, work: CommandWork) -> None:
    """A command (go-away, approval, undo, ...) as its job's one dispatch event."""
    payload = work.request.model_dump(mode="json")
    event_type = work.job.event_type
    send(gateway, settings.control_repo, {"event_type": event_type, "client_payload": payload})
    log.info("dispatched %s for %s on %s", event_type, work.request.actor, work.request.repo)
