"""A job whose claim is gone, known by what outlives its log issue (ENGINEERING §2).

People may delete or transfer any issue, a log issue included: a re-delivery of
the job (a re-run of the workflow) then finds no claim by listing or by number.
The job still left traces no collaborator removes in passing, and any one of
them stops the re-delivery:

- the bot's 🚀 or 😕 on the trigger (``tusk.github.reactions.ran_record``): a
  reaction is its author's to remove;
- the run's entry in the history issue (one of the latest ``history`` entries,
  which build-context reads anyway), carrying the job id;
- the bot's status comment of the job on the thread (``tusk.github.thread_status``),
  posted right after the claim: the job was claimed even if it has not finished,
  and its log issue (named by the comment's ``backlink`` marker) answers 410, 404
  or moved out of reach (``tusk.issues.claims.read_number``). A log issue still
  there, or moved where the bot can read it, is left to the claim itself to judge
  (the bot may have released it).

A re-delivery stopped this way says so once on the thread (under a ``rerun``
marker with the job id, looked for first) and in the step's summary.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from tusk.contracts.models import Trigger
from tusk.errors import TuskError
from tusk.github.gateway import Gateway
from tusk.github.once import post_marked_comment
from tusk.github.reactions import ran_record
from tusk.github.thread_status import status_of, thread_kind
from tusk.issues import claims
from tusk.issues.state_codec import StateEntry
from tusk.text.markers import first_marker, render_marker

FATES = {
    "deleted": "answers 410 Gone (deleted)",
    "moved": "was transferred out of the bot's reach",
    "none": "answers 404 Not Found",
}


def in_history(entries: Iterable[StateEntry], *, jobid: str) -> str | None:
    """Pure: why the history says the job ran, or None."""
    for entry in entries:
        if entry.jobid == jobid:
            return f"the history issue has this job's entry ({entry.url})"
    return None


def status_comment(
    gateway: Gateway, *, repo: str, trigger: Trigger, jobid: str, bot: str, since: datetime
) -> dict[str, Any] | None:
    """The bot's status comment of ``jobid`` on the trigger's issue or pull request."""
    if trigger.number is None or thread_kind(trigger.type) == "discussion":
        return None
    path = f"/repos/{repo}/issues/{trigger.number}/comments"
    stamp = since.strftime("%Y-%m-%dT%H:%M:%SZ")
    return status_of(list(gateway.paginate(path, params={"since": stamp})), bot=bot, jobid=jobid)


def claimed_on_thread(
    gateway: Gateway,
    *,
    repo: str,
    control_repo: str,
    trigger: Trigger,
    jobid: str,
    bot: str,
    since: datetime,
) -> str | None:
    """Why the thread says the job was claimed although no claim was found, or None."""
    found = status_comment(gateway, repo=repo, trigger=trigger, jobid=jobid, bot=bot, since=since)
    if found is None:
        return None
    log = str((first_marker(str(found.get("body") or ""), "backlink") or {}).get("log") or "")
    number = log.rstrip("/").rsplit("/", 1)[-1]
    fate = "cannot be read"
    if number.isdigit() and f"/{control_repo.lower()}/issues/" in log.lower():
        slot = claims.read_number(gateway, control_repo, int(number))
        if slot.fate == "here" or slot.item is not None:
            return None  # there, or moved within reach: the claim itself decides
        fate = FATES[slot.fate]
    return (
        f"the bot's status comment on the thread ({found.get('html_url')}) says this job was "
        f"claimed; its log issue {log or '(not named)'} {fate}"
    )


def ran_before(
    gateway: Gateway,
    *,
    repo: str,
    control_repo: str,
    trigger: Trigger,
    jobid: str,
    bot: str,
    history: Iterable[StateEntry],
    since: datetime,
) -> str | None:
    """Why job ``jobid`` ran or was claimed before, from what outlives its log issue; None
    when nothing says so (then the job may run)."""
    said = ran_record(gateway, repo=repo, trigger=trigger, bot=bot) or in_history(
        history, jobid=jobid
    )
    if said:
        return said
    try:
        return claimed_on_thread(
            gateway,
            repo=repo,
            control_repo=control_repo,
            trigger=trigger,
            jobid=jobid,
            bot=bot,
            since=since,
        )
    except TuskError as error:  # unreadable: erring towards not running twice
        return f"the thread could not be read to check for an earlier claim ({error})"


def refusal_body(why: str, *, jobid: str) -> str:
    return (
        f"{render_marker('rerun', {'jobid': jobid})}\n"
        f"⏹️ **Not run again.** This request was already taken up: {why}. "
        "Mention the bot again for a new run.\n"
    )


def say_not_again(
    gateway: Gateway, *, repo: str, trigger: Trigger, jobid: str, why: str, bot: str
) -> None:
    """The refusal on the trigger's issue or pull request, once per job (a courtesy:
    never raises)."""
    if trigger.number is None or thread_kind(trigger.type) == "discussion":
        return
    with contextlib.suppress(TuskError):
        post_marked_comment(
            gateway,
            repo,
            trigger.number,
            refusal_body(why, jobid=jobid),
            kind="rerun",
            nonce=jobid,
            key="jobid",
            bot=bot,
            look_first=True,
            what=f"the refusal to run job {jobid} again",
        )
