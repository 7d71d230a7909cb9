"""What each write tool is to the rest of Tusk, one entry per tool: the one place that
knows a write tool by its name.

The MCP server's catalog (``tusk.mcp.server.catalog``) gives each write its spec
beside its model and its functions; the gate (policy: permissions, scope, limits,
duplicates), the audit record, the runtime's approval mode and run-claude's
self-checks read these fields and never compare tool names. Pure data, so a step may
read it too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tusk.contracts.models import WriteOperation

# Where a write lands: the repository its ``repo`` argument names, the trigger's
# repository (a push serves it, through the bot's fork), or the control repository (the
# state issues).
LandsIn = Literal["repo_arg", "trigger_repo", "control_repo"]
# The counter a write feeds, and so the limit that stops it (``tusk.mcp.gate.policy``):
# comments per thread, issues and pull requests per repository, edits per comment,
# memory entries and history lines per run.
Counter = Literal["comments", "issues", "pull_requests", "edits", "memory", "history"]
# What of the run's own a write may touch: a comment it created (``comment_id``), or an
# issue or pull request it opened (``repo`` and ``number``).
Own = Literal["comment", "thread"]
# An argument checked for what it names: a branch of the run's namespace, a pull
# request's head on the bot's fork, a base branch free of secrets.
ArgCheck = Literal["branch", "head", "base"]


@dataclass(frozen=True)
class WriteSpec:
    """One write tool, as the gate, the audit, approval and the self-checks know it."""

    name: str
    operation: WriteOperation | None  # in the permission grammar; None: no marker takes it
    lands_in: LandsIn
    counter: Counter | None  # None: only the run's total limits it
    own_only: Own | None  # may touch only the run's own: a comment, or a thread it opened
    releases_own: bool  # the run's object is gone after it (it still counts)
    counts_toward_run: bool  # counted against ``writes_per_run`` (state entries are not)
    message: bool  # a message people read: the first self-check asks for one (A7.1)
    opens_thread: bool  # opens an issue or pull request (refused to a reply-only run)
    discussion: bool  # writes to a discussion (only where the installation allows it)
    checked_args: tuple[tuple[str, ArgCheck], ...] = ()
    # Still allowed once the trigger's repository sent the bot away during the run: the
    # run's own summary, which says so.
    survives_go_away: bool = False


WRITE_SPECS: tuple[WriteSpec, ...] = (
    WriteSpec(
        "create_issue", "issue", "repo_arg", "issues", own_only=None, releases_own=False,
        counts_toward_run=True, message=True, opens_thread=True, discussion=False,
    ),
    WriteSpec(
        "create_comment", "comment", "repo_arg", "comments", own_only=None,
        releases_own=False, counts_toward_run=True, message=True, opens_thread=False,
        discussion=False,
    ),
    WriteSpec(
        "create_discussion_comment", "comment", "repo_arg", "comments", own_only=None,
        releases_own=False, counts_toward_run=True, message=True, opens_thread=False,
        discussion=True,
    ),
    WriteSpec(
        "create_pull_request", "pull_request", "repo_arg", "pull_requests", own_only=None,
        releases_own=False, counts_toward_run=True, message=True, opens_thread=True,
        discussion=False, checked_args=(("head", "head"), ("base", "base")),
    ),
    WriteSpec(
        "push_branch", "push", "trigger_repo", None, own_only=None, releases_own=False,
        counts_toward_run=True, message=False, opens_thread=False, discussion=False,
        checked_args=(("branch", "branch"),),
    ),
    WriteSpec(
        "update_comment", "comment", "repo_arg", "edits", own_only="comment", releases_own=False,
        counts_toward_run=True, message=False, opens_thread=False, discussion=False,
    ),
    WriteSpec(
        "delete_comment", "comment", "repo_arg", None, own_only="comment", releases_own=True,
        counts_toward_run=True, message=False, opens_thread=False, discussion=False,
    ),
    WriteSpec(
        "add_label", "issue", "repo_arg", None, own_only="thread", releases_own=False,
        counts_toward_run=True, message=False, opens_thread=False, discussion=False,
    ),
    WriteSpec(
        "memory", "memory", "control_repo", "memory", own_only=None, releases_own=False,
        counts_toward_run=False, message=False, opens_thread=False, discussion=False,
    ),
    # The run's own summary (A7.3): no marker takes it away, and it stays possible at
    # the end of a run whatever else the run wrote.
    WriteSpec(
        "history", None, "control_repo", "history", own_only=None, releases_own=False,
        counts_toward_run=False, message=False, opens_thread=False, discussion=False,
        survives_go_away=True,
    ),
)  # fmt: skip

_BY_NAME = {spec.name: spec for spec in WRITE_SPECS}


def write_spec(tool: str) -> WriteSpec | None:
    """The spec of write tool ``tool``; None for a read or a tool that does not exist."""
    return _BY_NAME.get(tool)


def message_tools() -> frozenset[str]:
    """The writes that leave a message people read (comments, issues, pull requests)."""
    return frozenset(spec.name for spec in WRITE_SPECS if spec.message)
