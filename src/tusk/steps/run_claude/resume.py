"""A later run on a thread resumes the conversation of the earlier ones (MISSION C3).

Before the agent starts, run-claude finds the earlier runs on the thread from the
log issues (``tusk.issues.thread_runs``), reads each one's conversation record from
its log issue (the bot's comments only) and checks it against the digest that
run's audit chain holds (``tusk.audit.on_issue.held_record``: the chain verified, its
markers naming the same; ``proxy.conversation.read_record``). The verified turns,
oldest runs left out whole to stay within ``limits.resume_chars`` and
``limits.resume_runs``, become the model proxy's ``PriorTurns``. A record that is
named but missing, unreadable or not the digest means a fresh start (the agent
has the thread and the history as ever), and the note says why; a run that named
no record (it never started its agent) is left out. Nothing here changes what
the run may do: its rights are its own mention's (``permission_config``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tusk.audit.on_issue import held_record
from tusk.contracts.config import Secrets, Settings
from tusk.contracts.models import RunMetadata
from tusk.errors import TuskError
from tusk.github.gateway import Gateway
from tusk.issues.log_issue import LogIssue
from tusk.issues.thread_runs import earlier_runs, list_log_issues
from tusk.steps.run_claude.proxy.conversation import ConversationRecord, Turn, read_record


@dataclass(frozen=True)
class Resume:
    """The turns the run starts with, and what the log issue and the thread say of it."""

    turns: tuple[Turn, ...] = ()
    note: str = ""  # for the log issue; empty: the thread had no earlier run
    thread_note: str = ""  # for the status on the thread: no log issue numbers there


def earlier_turns(
    records: Sequence[tuple[LogIssue, ConversationRecord]], *, chars: int
) -> tuple[tuple[Turn, ...], int]:
    """Pure: the turns of the newest runs that fit in ``chars`` (whole runs only, each
    first user turn saying which run it was), and how many older runs were left out."""
    kept: list[tuple[Turn, ...]] = []
    used = 0
    for issue, record in reversed(records):
        turns = list(record.turns)
        if not turns:
            continue
        head = f"(Earlier on this thread: the run of log issue #{issue.number}.)"
        turns[0] = Turn(turns[0].role, (head, *turns[0].blocks))
        size = sum(len(turn.text) for turn in turns)
        if used + size > chars:
            break
        kept.insert(0, tuple(turns))
        used += size
    left_out = len([r for r in records if r[1].turns]) - len(kept)
    return tuple(turn for run in kept for turn in run), left_out


def load(gateway: Gateway, settings: Settings, run: RunMetadata) -> Resume:
    """The earlier runs' turns on the run's thread, verified, or a fresh start and why."""
    limits = settings.limits
    if limits.resume_chars == 0 or limits.resume_runs == 0 or run.thread_number is None:
        return Resume()
    try:
        runs = earlier_runs(
            list_log_issues(gateway, settings),
            settings,
            repo=run.repo,
            number=run.thread_number,
            before=run.log_issue_number,
        )[-limits.resume_runs :]
        records: list[tuple[LogIssue, ConversationRecord]] = []
        for issue in runs:
            path = f"/repos/{settings.control_repo}/issues/{issue.number}/comments"
            comments = list(gateway.paginate(path))
            try:
                digest = _digest(comments, issue, settings)
            except Unverified as error:
                found: ConversationRecord | str | None = str(error)
            else:
                found = read_record(comments, jobid=issue.jobid, bot=settings.bot, digest=digest)
            if isinstance(found, str):
                return Resume(
                    note=fresh(f"the earlier run of log issue #{issue.number}: {found}"),
                    thread_note=fresh("the record of an earlier run on this thread did not verify"),
                )
            if found is not None:
                records.append((issue, found))
    except TuskError as error:
        why = "the earlier runs on this thread could not be read"
        return Resume(note=fresh(f"{why} ({error})"), thread_note=fresh(why))
    if not records:
        if not runs:
            return Resume()
        why = "the earlier runs on this thread kept no conversation record"
        return Resume(note=fresh(why), thread_note=fresh(why))
    turns, left_out = earlier_turns(records, chars=limits.resume_chars)
    if not turns:
        why = "the earlier runs' turns are longer than limits.resume_chars"
        return Resume(note=fresh(why), thread_note=fresh(why))
    resumed = len(records) - left_out
    numbers = ", ".join(f"#{issue.number}" for issue, _ in records[left_out:])
    note = (
        f"resumed the conversation of {resumed} earlier run(s) on this thread (log issue "
        f"{numbers}), each record checked against the digest its audit chain holds"
    )
    thread_note = f"resumed the conversation of {resumed} earlier run(s) on this thread"
    if left_out:
        note += f"; {left_out} older run(s) left out to stay within limits.resume_chars"
    return Resume(turns=turns, note=note, thread_note=thread_note)


def fresh(why: str) -> str:
    return f"fresh start: {why}; the agent has the thread and the history as ever"


def _digest(
    comments: Sequence[Mapping[str, Any]], issue: LogIssue, settings: Settings
) -> str | None:
    """The conversation digest the run's audit chain holds (the bot's comments only: its
    own set, verified; a marker naming another digest is an edit), or None when the
    chain holds none. Raises ``Unverified`` when the chain does not hold or disagrees."""
    own = [
        c
        for c in comments
        if str((c.get("user") or {}).get("login") or "").lower() == settings.bot.lower()
    ]
    held = held_record(own, issue.jobid)
    if isinstance(held, str):
        raise Unverified(held)
    return held.digest


class Unverified(Exception):
    """A run's audit chain does not vouch for its record: what is wrong."""


def load_for(secrets: Secrets, settings: Settings, run: RunMetadata) -> Resume:
    """``load`` with the agent token (it reads the control repository's log issues)."""
    token = secrets.require("agent_token")["agent_token"]
    gateway = Gateway(api_url=secrets.github_api_url, token=token, token_name="agent")
    try:
        return load(gateway, settings, run)
    finally:
        gateway.close()
