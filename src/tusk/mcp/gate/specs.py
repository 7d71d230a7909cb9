"""What a write tool is to the gate, the audit and approval: its ``WriteSpec``.

Each write's spec is written once, in its catalog entry (``tusk.mcp.server.catalog``),
which hands every entry's spec to ``register`` as it is built; the policy, the recorder
and the runtime look a spec up by the tool's name here and never compare names.
Outside the MCP server nothing reads a spec: what a step needs of a write is on its
audit record (``created``: what it made, or on a staged record what it would make).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from tusk.contracts.models import MESSAGE_KINDS, CreatedKind, WriteOperation

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
    """One write tool, as the gate, the audit, approval and the self-checks know it (its
    name is its catalog entry's, which registers it)."""

    operation: WriteOperation | None  # in the permission grammar; None: no marker takes it
    lands_in: LandsIn
    counter: Counter | None  # None: only the run's total limits it
    own_only: Own | None  # may touch only the run's own: a comment, or a thread it opened
    releases_own: bool  # the run's object is gone after it (it still counts)
    counts_toward_run: bool  # counted against ``writes_per_run`` (state entries are not)
    # What it makes, as its audit record says (None: it changes what exists); a comment,
    # issue or pull request is a message, which the first self-check asks for (A7.1).
    creates: CreatedKind | None
    opens_thread: bool  # opens an issue or pull request (refused to a reply-only run)
    discussion: bool  # writes to a discussion (only where the installation allows it)
    checked_args: tuple[tuple[str, ArgCheck], ...] = ()
    # Still allowed once the trigger's repository sent the bot away during the run: the
    # run's own summary, which says so.
    survives_go_away: bool = False

    @property
    def message(self) -> bool:
        return self.creates in MESSAGE_KINDS


_BY_NAME: dict[str, WriteSpec] = {}


def register(specs: Mapping[str, WriteSpec]) -> None:
    """The catalog's specs by tool name, as it builds its entries; a name given twice
    with two specs is a bug."""
    for name, spec in specs.items():
        if _BY_NAME.get(name, spec) != spec:
            raise ValueError(f"two write specs name {name}")
        _BY_NAME[name] = spec


def write_spec(tool: str) -> WriteSpec | None:
    """The spec of write tool ``tool``; None for a read or a tool that does not exist."""
    return _BY_NAME.get(tool)


def write_specs() -> dict[str, WriteSpec]:
    """Every write tool's spec, by name."""
    return dict(_BY_NAME)


def message_tools() -> frozenset[str]:
    """The writes that leave a message people read (comments, issues, pull requests)."""
    return frozenset(name for name, spec in _BY_NAME.items() if spec.message)
