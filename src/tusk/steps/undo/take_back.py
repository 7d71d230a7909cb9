"""undo's writes: each of the run's writes taken back, after checking it is the run's.

Before anything is removed it is read back: a comment, issue or pull request
must be the bot's and carry this run's marker, a branch must be on the bot's
own fork. Anything else is kept and reported (``skipped``): undo never touches
another run's writes or anyone else's. What is already gone is reported as
such; a failure is reported and the rest is still done.
"""

from __future__ import annotations

from typing import Literal

from tusk.github.gateway import Gateway, GitHubError, NotFound, ValidationFailed
from tusk.steps.undo.plan import Removal, UndoReport, backlink_of

Result = Literal["done", "gone", "skipped"]


def _ours(item: dict[str, object], *, bot: str, jobid: str) -> bool:
    marker = backlink_of(dict(item), bot=bot)
    return marker is not None and marker.get("jobid") == jobid


def take_back(gateway: Gateway, removal: Removal, *, bot: str, jobid: str) -> tuple[Result, str]:
    """Remove one write of run ``jobid``; what happened, and why when not done."""
    base = f"/repos/{removal.repo}"
    try:
        if removal.kind == "branch":
            if removal.repo.split("/", 1)[0].lower() != bot.lower():
                return "skipped", "not on the bot's fork"
            gateway.delete(f"{base}/git/refs/heads/{removal.ident}")
            return "done", ""
        path = {
            "comment": f"{base}/issues/comments/{removal.ident}",
            "issue": f"{base}/issues/{removal.ident}",
            "pull_request": f"{base}/pulls/{removal.ident}",
        }[removal.kind]
        found = dict(gateway.get(path))
        if not _ours(found, bot=bot, jobid=jobid):
            return "skipped", "not this run's (no marker of the run on the bot's own content)"
        if removal.kind == "comment":
            gateway.delete(path)
        elif found.get("state") == "closed":
            return "gone", "already closed"
        elif removal.kind == "issue":
            gateway.patch(path, json={"state": "closed", "state_reason": "not_planned"})
        else:
            gateway.patch(path, json={"state": "closed"})
    except NotFound:
        return "gone", "already removed"
    except ValidationFailed as error:  # a branch deleted meanwhile answers 422
        if removal.kind == "branch":
            return "gone", "already removed"
        raise error
    return "done", ""


def take_back_all(
    gateway: Gateway, removals: list[Removal], report: UndoReport, *, bot: str, jobid: str
) -> None:
    for removal in removals:
        try:
            result, why = take_back(gateway, removal, bot=bot, jobid=jobid)
        except GitHubError as error:
            report.failed.append((removal, error.title))
            continue
        if result == "done":
            report.done.append(removal)
        elif result == "gone":
            report.gone.append(removal)
        else:
            report.skipped.append((removal, why))
