"""undo's writes: each of the run's writes taken back, after checking it is still the run's.

Before anything is removed it is read back: a comment, issue or pull request
must be the bot's and carry this run's marker; a comment edited since the run
(its ``updated_at`` after its creation and the run's last audit record) is still deleted while
that marker is intact, and the report says so. A branch must be on the bot's
own fork, created by the run's push (not only moved by it) and still at the
commit the run pushed (``GET .../branches/{branch}``, read just before): a branch another
run or a person pushed to since is left, with its pull request closed as the
run's. Anything else is kept and reported (``skipped``): undo never touches
another run's writes or anyone else's. What is already gone is reported as
such; a failure is reported and the rest is still done.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from urllib.parse import quote

from tusk.github.gateway import Gateway, GitHubError, NotFound, ValidationFailed
from tusk.steps.undo.plan import Removal, UndoReport, backlink_of
from tusk.text.markers import first_marker

Result = Literal["done", "edited", "gone", "skipped"]


def _ours(item: dict[str, object], *, bot: str, jobid: str) -> bool:
    marker = backlink_of(dict(item), bot=bot)
    return marker is not None and marker.get("jobid") == jobid


def _when(text: object) -> datetime | None:
    return datetime.fromisoformat(str(text).replace("Z", "+00:00")) if text else None


def edited_since(comment: dict[str, Any], run_ended: datetime | None) -> bool:
    """An agent's comment changed after its run (not Tusk's status comment, which the
    write-up itself updates)."""
    body = str(comment.get("body") or "")
    # Both carry the run's backlink; only the status comment carries a ``status`` marker.
    if run_ended is None or first_marker(body, "backlink") is None:
        return False
    if first_marker(body, "status") is not None:
        return False
    updated, created = _when(comment.get("updated_at")), _when(comment.get("created_at"))
    return updated is not None and updated > run_ended and (created is None or updated > created)


def branch_result(gateway: Gateway, removal: Removal, *, bot: str) -> tuple[Result, str]:
    """Delete the run's branch only if the run created it and nobody pushed to it since."""
    base = f"/repos/{removal.repo}"
    if removal.repo.split("/", 1)[0].lower() != bot.lower():
        return "skipped", "not on the bot's fork"
    if not removal.created:
        said = "moved an existing branch" if removal.created is False else "is not recorded"
        return "skipped", f"the run did not create this branch (its push {said}), so it is left"
    now = dict(gateway.get(f"{base}/branches/{removal.ident}"))
    sha = str((now.get("commit") or {}).get("sha") or "")
    if not removal.head or sha != removal.head:
        return "skipped", (
            f"it now points at {sha[:12] or 'another commit'}, not the run's "
            f"{(removal.head or 'unrecorded head')[:12]}: someone pushed to it since, so it "
            "is left with their commits (the run's pull request is closed)"
        )
    gateway.delete(f"{base}/git/refs/heads/{removal.ident}")
    return "done", ""


def take_back(
    gateway: Gateway,
    removal: Removal,
    *,
    bot: str,
    jobid: str,
    run_ended: datetime | None = None,
) -> tuple[Result, str]:
    """Remove one write of run ``jobid``; what happened, and why when not done."""
    base = f"/repos/{removal.repo}"
    try:
        if removal.kind == "branch":
            return branch_result(gateway, removal, bot=bot)
        if removal.kind == "label":
            return _take_label_back(gateway, removal, bot=bot, jobid=jobid)
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
            return ("edited", "") if edited_since(found, run_ended) else ("done", "")
        if found.get("state") == "closed":
            return "gone", "already closed"
        if removal.kind == "issue":
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


def _take_label_back(
    gateway: Gateway, removal: Removal, *, bot: str, jobid: str
) -> tuple[Result, str]:
    """A label the run added, removed from the issue or pull request it opened (the bot's,
    with this run's marker) and only there."""
    number, _, label = removal.ident.partition("/")
    base = f"/repos/{removal.repo}/issues/{number}"
    if not _ours(dict(gateway.get(base)), bot=bot, jobid=jobid):
        return "skipped", "not on an issue or pull request of this run"
    gateway.delete(f"{base}/labels/{quote(label, safe='')}")
    return "done", ""


def take_back_all(
    gateway: Gateway,
    removals: list[Removal],
    report: UndoReport,
    *,
    bot: str,
    jobid: str,
    run_ended: datetime | None = None,
) -> None:
    for removal in removals:
        try:
            result, why = take_back(gateway, removal, bot=bot, jobid=jobid, run_ended=run_ended)
        except GitHubError as error:
            report.failed.append((removal, error.title))
            continue
        if result in ("done", "edited"):
            report.done.append(removal)
            if result == "edited":
                report.edited.append(removal)
        elif result == "gone":
            report.gone.append(removal)
        else:
            report.skipped.append((removal, why))
