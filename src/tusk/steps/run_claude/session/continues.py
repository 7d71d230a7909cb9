"""The self-checks after the main session (MISSION A7), each a ``--resume``.

``--resume <session_id>`` and never ``-c``: ``-c`` silently starts a fresh
session when it finds nothing to continue, ``--resume`` fails loudly.

1. only when the audit shows no comment, issue or PR created: leave a message;
2. always: confirm the changes are pushed (when the workspace has any) and
   the PR exists;
3. always: with only the history tool allowed, write a one-line summary.

After a failure the model may still answer (a loop, the turn or time
budget: the continues run as after a success) or may not (an API error, a
crash: nothing is attempted).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from tusk.audit.chain import created_messages
from tusk.contracts.models import MESSAGE_KINDS, AuditRecord
from tusk.git.agent import AgentGit, BundleError
from tusk.steps.run_claude.writeup.outcome import Outcome
from tusk.text.render import render

ContinueKind = Literal["message", "confirm", "history"]

HISTORY_TOOL = "history"
CONTINUE_MAX_TURNS = {"message": 8, "confirm": 12, "history": 3}
CONTINUE_BUDGET_SECONDS = 300.0

PASS_NAMES: dict[ContinueKind, str] = {
    "message": "Self-check 1: leave a message",
    "confirm": "Self-check 2: confirm the work",
    "history": "Self-check 3: history",
}


def plan(*, outcome: Outcome, messages_created: int) -> list[ContinueKind]:
    """Which continues to run after the main session ended with ``outcome``.

    A stopped session (a loop, the turn or time budget) gets them all too: the
    person who asked still deserves a message, and work done before the stop
    still has to be pushed and its PR confirmed (A7: "always"). Only a model
    that no longer answers gets none."""
    if not outcome.model_still_answers:
        return []
    first: list[ContinueKind] = ["message"] if messages_created == 0 else []
    return [*first, "confirm", "history"]


def messages_left(records: Sequence[AuditRecord]) -> int:
    """Comments, issues and PRs the run made, or recorded (record-only mode counts: the
    message exists for review; asking again would only stage a second one). A staged
    record names what its write would make, so no list of tools is kept here."""
    made = len(created_messages(records))
    staged = sum(1 for r in records if r.decision == "staged" and r.created in MESSAGE_KINDS)
    return made + staged


@dataclass(frozen=True)
class WorkspaceState:
    has_changes: bool
    summary: str


def workspace_state(git: AgentGit) -> WorkspaceState:
    """Uncommitted files and commits not on any remote branch, as git sees them.

    ``git`` runs as the agent: the workspace's configuration is the agent's
    (``core.fsmonitor`` runs a command on ``git status``), so run as this process,
    root under isolation, it would run the agent's commands as root."""
    if not git.workspace.is_dir():
        return WorkspaceState(False, "the workspace is not a git repository")
    status = _git(git, ["status", "--porcelain", "-z"])
    ahead = _git(git, ["log", "--oneline", "--branches", "--not", "--remotes"])
    if status is None and ahead is None:
        return WorkspaceState(False, "the workspace is not a git repository")
    changed = changed_paths(status or "")
    commits = [line for line in (ahead or "").splitlines() if line.strip()]
    parts = []
    if changed:
        parts.append(f"{len(changed)} uncommitted file(s)")
    if commits:
        parts.append(f"{len(commits)} commit(s) on local branches not on the upstream repository")
    return WorkspaceState(bool(changed or commits), ", ".join(parts) or "no changes")


def changed_paths(porcelain_z: str) -> list[str]:
    """The paths of ``git status --porcelain -z``: NUL-separated, so a name holding a
    newline is one path; a rename or copy carries its old path as a second field."""
    fields = porcelain_z.split("\0")
    paths, index = [], 0
    while index < len(fields):
        entry = fields[index]
        index += 1
        if len(entry) < 4:
            continue
        paths.append(entry[3:])
        if entry[0] in "RC" or entry[1] in "RC":
            index += 1  # the path it was renamed or copied from
    return paths


def _git(git: AgentGit, args: list[str]) -> str | None:
    try:
        completed = git.run(args)
    except BundleError:  # took too long
        return None
    if completed.returncode != 0:
        return None
    return completed.stdout.decode("utf-8", "replace")


def prompt(
    kind: ContinueKind,
    *,
    trigger_url: str,
    workspace: WorkspaceState,
    history_chars: int,
    branch_prefix: str,
) -> str:
    return render(
        f"continue_{kind}.md.j2",
        trigger_url=trigger_url,
        workspace=workspace,
        history_chars=history_chars,
        branch_prefix=branch_prefix,
        tool_prefix="mcp__github__",
    )


@dataclass(frozen=True)
class ToolFlags:
    builtin_tools: tuple[str, ...]
    allowed_tools: tuple[str, ...]
    disallowed_tools: tuple[str, ...]


def tool_flags(
    kind: ContinueKind | None,
    *,
    builtin_tools: Sequence[str],
    server_tools: Sequence[str],
    server_pattern: str,
) -> ToolFlags:
    """The main session and the first two continues get the agent's tools; the
    history pass exactly one: ``--tools "" --allowedTools <history>
    --disallowedTools <every other tool of the server>``."""
    if kind != "history":
        return ToolFlags(tuple(builtin_tools), (server_pattern, *builtin_tools), ())
    history = server_pattern.replace("*", HISTORY_TOOL)
    others = tuple(name for name in server_tools if name != history)
    return ToolFlags((), (history,), others)
