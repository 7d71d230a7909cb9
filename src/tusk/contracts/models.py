"""Contracts between Tusk's steps: strict, versioned pydantic models.

Everything that crosses a step boundary (a dispatch payload, a file handed
from one action to the next, an audit line) is one of these models. They
refuse unknown fields so a mismatch between two versions fails loudly.
Their JSON Schemas are exported to ``docs/schemas/`` (see ``tusk.contracts.schemas``).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from tusk.contracts.base import StrictModel as StrictModel  # imported from here too
from tusk.contracts.raw_context import RawContext

CONTEXT_VERSION: Final = 1
SHARD_EVENT_TYPE = "tusk-shard"


def command_event_type(kind: str) -> str:
    """The ``repository_dispatch`` event type of a command job: ``tusk-<kind>``, its
    underscores as dashes (``go_away`` is ``tusk-go-away``). The one naming of them all
    (``tusk.contracts.commands``)."""
    return "tusk-" + kind.replace("_", "-")


GO_AWAY_EVENT_TYPE = command_event_type("go_away")
APPROVAL_EVENT_TYPE = command_event_type("approval")
UNDO_EVENT_TYPE = command_event_type("undo")
STOP_EVENT_TYPE = command_event_type("stop")
MAX_SHARD_DATA = 60000  # characters of data per shard (limits.shard_bytes at most)
# The largest encoded context one job carries (gzip + base64): a 20 MB context that does
# not compress at all still fits. It bounds the shards of a job: at most this many
# characters over all shards, so at most MAX_TOTAL_SHARDS shards of the smallest size.
MAX_ENCODED_CONTEXT = 32 * 1024 * 1024
MIN_SHARD_DATA = 4  # characters of data per shard at least (one base64 quantum)
MAX_TOTAL_SHARDS = MAX_ENCODED_CONTEXT // MIN_SHARD_DATA

# Owners are logins (no dots); a name may hold dots but not be only dots, so
# "owner/.." can never walk up an API path.
REPO_PATTERN = r"^[A-Za-z0-9_-]{1,39}/[A-Za-z0-9_.-]*[A-Za-z0-9_-][A-Za-z0-9_.-]*$"
LOGIN_PATTERN = r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$"
JOBID_PATTERN = r"^[a-z0-9][a-z0-9-]{2,80}$"

RepoName = Annotated[str, StringConstraints(pattern=REPO_PATTERN)]
Login = Annotated[str, StringConstraints(pattern=LOGIN_PATTERN)]
JobId = Annotated[str, StringConstraints(pattern=JOBID_PATTERN)]

TrustLevel = Literal["owner", "collaborator", "external"]
# Which source decided the trust level (see tusk.github.trust): the author owns the repository;
# GitHub's collaborator-permission endpoint; the trigger's author_association because
# that endpoint was not readable (403 without push access); or nothing could be read.
TrustSource = Literal["repository_owner", "permission_endpoint", "author_association", "none"]
TRUST_SOURCE_DESCRIPTION = (
    "which source decided trust_level: repository_owner (the actor owns the repository), "
    "permission_endpoint (GitHub's collaborator-permission endpoint), author_association "
    "(that endpoint was not readable, so the trigger's author_association decided: OWNER, "
    "MEMBER and COLLABORATOR make a collaborator), none (nothing could be read: external)"
)
TriggerType = Literal[
    "issue_body",
    "pull_request_body",
    "issue_comment",
    "review",
    "review_comment",
    "discussion_body",
    "discussion_comment",
]
WriteOperation = Literal["comment", "issue", "pull_request", "push", "memory"]
ALL_WRITE_OPERATIONS: tuple[WriteOperation, ...] = (
    "comment",
    "issue",
    "pull_request",
    "push",
    "memory",
)


class PermissionConfig(StrictModel):
    """What one run may do: the configured defaults, narrowed by the mention's marker.

    ``marker`` is the marker text as written (None when the mention had none).
    When the marker was malformed, ``error`` says why and the rest is the
    fail-closed set: a reply on the trigger's own thread and nothing else.
    """

    marker: str | None = None
    error: str | None = None
    operations: tuple[WriteOperation, ...] = ALL_WRITE_OPERATIONS
    only_this_thread: bool = False
    repos: tuple[RepoName, ...] | None = None
    comments_per_thread: int = Field(default=2, ge=0)
    issues_per_repo: int = Field(default=1, ge=0)
    prs_per_repo: int = Field(default=1, ge=0)
    memory_writes: int = Field(default=3, ge=0)
    approve: bool = Field(
        default=False,
        description="the requester asked that every write wait for approval "
        "([permissions: approve]); a marker can add it, never take it away",
    )
    # The run's own limits (MISSION C4): the configured values, or lower ones the marker
    # asked for; None (a context written before these existed) means the configured one.
    budget_usd: float | None = Field(
        default=None, gt=0, description="model spend (USD) past which the run is stopped"
    )
    max_turns: int | None = Field(default=None, ge=1, description="Claude Code --max-turns")
    run_minutes: float | None = Field(
        default=None, gt=0, description="wall-clock budget of the run, in minutes"
    )

    def allows(self, operation: WriteOperation) -> bool:
        return operation in self.operations

    def narrowed_by(self, later: PermissionConfig) -> PermissionConfig:
        """What both allow: a follow-up's marker narrows a run, never widens it (C1)."""
        repos = self.repos if later.repos is None else later.repos
        if self.repos is not None and later.repos is not None:
            wanted = {name.lower() for name in later.repos}
            repos = tuple(name for name in self.repos if name.lower() in wanted)
        return self.model_copy(
            update={
                "operations": tuple(op for op in self.operations if op in later.operations),
                "only_this_thread": self.only_this_thread or later.only_this_thread,
                "repos": repos,
                "comments_per_thread": min(self.comments_per_thread, later.comments_per_thread),
                "issues_per_repo": min(self.issues_per_repo, later.issues_per_repo),
                "prs_per_repo": min(self.prs_per_repo, later.prs_per_repo),
                "memory_writes": min(self.memory_writes, later.memory_writes),
                "approve": self.approve or later.approve,
            }
        )


class Trigger(StrictModel):
    """The exact node that mentioned the bot."""

    type: TriggerType
    id: str = Field(description="REST id (GraphQL node id for discussions) of the triggering node")
    url: str
    number: int | None = Field(default=None, description="issue / PR / discussion number")
    author: Login
    body: str
    created_at: datetime
    updated_at: datetime | None = None
    review_id: int | None = Field(
        default=None, description="the review a review comment belongs to"
    )


class TaskWork(StrictModel):
    """A trigger the poller will dispatch: the job, who asked, their trust and rights."""

    jobid: JobId
    repo: RepoName
    actor: Login
    trust_level: TrustLevel
    trust_source: TrustSource = Field(default="none", description=TRUST_SOURCE_DESCRIPTION)
    permission_config: PermissionConfig
    trigger: Trigger


class ContextDocument(TaskWork):
    """Everything one agent run needs, as the poller gathered it (MISSION P7): the task
    and its thread's raw context."""

    # A thread's bodies, URLs and ids are nearly all unique: caching every short string
    # pydantic-core reads costs more than it saves (a tenth of the parse of a long
    # thread); field names repeat in every comment and stay cached.
    model_config = ConfigDict(cache_strings="keys")

    version: Literal[1] = CONTEXT_VERSION
    raw: RawContext = Field(description="the full raw context (MISSION P6)")
    timestamp: datetime


class Shard(StrictModel):
    """One ``repository_dispatch`` ``client_payload`` carrying part of a context.

    Every field is bounded: ``jobid`` by its pattern (3-81 characters), ``checksum`` by
    its pattern, ``data`` by ``MAX_SHARD_DATA`` characters, the index and total by
    ``MAX_TOTAL_SHARDS``, and the total against the size limit: the shards of a job
    carry at most ``MAX_ENCODED_CONTEXT`` characters, so every shard but the last (all
    of one length) says ``(total_shards - 1) * len(data)`` within it. No field holds
    JSON of its own, and the event around the payload may be nested at most
    ``tusk.shards.transport.MAX_EVENT_DEPTH`` deep."""

    jobid: JobId
    shard_index: int = Field(ge=0, lt=MAX_TOTAL_SHARDS)
    total_shards: int = Field(ge=1, le=MAX_TOTAL_SHARDS)
    encoding: Literal["gzip+base64"] = "gzip+base64"
    checksum: Annotated[str, StringConstraints(pattern=r"^sha256:[0-9a-f]{64}$")]
    # One dispatch carries at most 65,535 characters of client_payload (docs.github.com
    # rest/repos/repos#create-a-repository-dispatch-event): the data is cut well below.
    data: str = Field(max_length=MAX_SHARD_DATA)

    @model_validator(mode="after")
    def _index_below_total(self) -> Shard:
        if self.shard_index >= self.total_shards:
            raise ValueError(
                f"shard_index {self.shard_index} is not below total_shards "
                f"{self.total_shards} (indices count from 0)"
            )
        last = self.shard_index == self.total_shards - 1
        if not last and (self.total_shards - 1) * len(self.data) > MAX_ENCODED_CONTEXT:
            raise ValueError(
                f"total_shards {self.total_shards} shards of {len(self.data)} characters would "
                f"carry more than {MAX_ENCODED_CONTEXT} characters, the most one job holds"
            )
        return self


class CommandRequest(StrictModel):
    """The envelope of every command job's dispatch payload (``tusk.contracts.commands``):
    who wrote the command, where, and when. Each step reads the comment back from GitHub
    before acting; a command adds its own fields, ten keys in all at most (GitHub's
    dispatch payload allows no more)."""

    version: Literal[1] = 1
    jobid: JobId
    actor: Login
    repo: RepoName
    comment_id: str
    comment_url: str
    timestamp: datetime


class GoAwayRequest(CommandRequest):
    """The ``tusk-go-away`` dispatch payload."""

    trust_level: TrustLevel
    trust_source: TrustSource = Field(default="none", description=TRUST_SOURCE_DESCRIPTION)
    comment_type: TriggerType = "issue_comment"


class ApprovalRequest(CommandRequest):
    """The ``tusk-approval`` dispatch payload: ``@bot apply [digest]`` or ``@bot discard``
    on a thread where a staged set waits. The apply job reads the comment back from
    GitHub and decides (who may approve, which set); nothing here is trusted but the
    comment's address."""

    verb: Literal["apply", "discard"]
    digest: str | None = Field(None, description="as typed; None: the one set pending there")
    number: int


class UndoRequest(GoAwayRequest):
    """The ``tusk-undo`` dispatch payload: who wrote ``@bot undo``, and where. The same
    fields as a go-away request; the undo step reads the comment back from GitHub and
    decides everything else there."""


class StopRequest(GoAwayRequest):
    """The ``tusk-stop`` dispatch payload: who wrote ``@bot stop``, and where. The stop
    step reads the comment back from GitHub, finds the run in flight on the thread and
    decides from GitHub whether the actor may end it (MISSION C2)."""


class BlockedRepo(StrictModel):
    repo: RepoName
    by: Login
    at: datetime
    source_url: str = ""


class BlockedUser(StrictModel):
    user: Login
    at: datetime
    source_url: str = ""


class Blocklist(StrictModel):
    """Repositories and users the bot must leave alone (MISSION G2, G4)."""

    version: Literal[1] = 1
    repos: tuple[BlockedRepo, ...] = ()
    users: tuple[BlockedUser, ...] = ()

    def blocks(self, repo: str) -> bool:
        """True when ``repo`` is blocked itself or belongs to a blocked user."""
        owner = repo.split("/", 1)[0].lower()
        return any(entry.repo.lower() == repo.lower() for entry in self.repos) or any(
            entry.user.lower() == owner for entry in self.users
        )

    def blocks_user(self, login: str) -> bool:
        return any(entry.user.lower() == login.lower() for entry in self.users)


AuditDecision = Literal["allowed", "refused", "staged", "failed"]
# What a write makes, as its audit record names it (on a staged record: what it would make).
CreatedKind = Literal["comment", "issue", "pull_request", "branch", "label", "history", "memory"]
# The kinds that are a message people read: what the first self-check asks for (A7.1).
MESSAGE_KINDS: frozenset[str] = frozenset({"comment", "issue", "pull_request"})


class AuditRecord(StrictModel):
    """One line of the MCP server's hash-chained audit log (MISSION M10)."""

    seq: int = Field(ge=0)
    time: datetime
    tool: str
    kind: Literal["read", "write", "record"] = Field(
        description="a call (read or write), or a record of the run the chain vouches for "
        "(the write-up's conversation record, by digest), which is no call"
    )
    target: str = Field(description="owner/name, owner/name#number, or a state issue")
    args_digest: str = Field(
        description="sha256 of the canonical JSON arguments (a record: of the record itself)"
    )
    decision: AuditDecision
    code: str | None = Field(default=None, description="refusal code, e.g. LIMIT_EXCEEDED")
    reason: str | None = None
    url: str | None = Field(default=None, description="URL of what the call created")
    created: CreatedKind | None = None
    branch: Literal["created", "moved"] | None = Field(
        default=None,
        description="push_branch: whether the push created the branch or moved an existing one",
    )
    head: str | None = Field(default=None, description="push_branch: the commit it pushed")
    duration_ms: float = 0.0
    prev_hash: str
    hash: str


def is_valid_repo(name: str) -> bool:
    return re.fullmatch(REPO_PATTERN, name) is not None


CONTRACT_MODELS: dict[str, type[BaseModel]] = {
    "context-document": ContextDocument,
    "raw-context": RawContext,
    "shard": Shard,
    "permission-config": PermissionConfig,
    "go-away-request": GoAwayRequest,
    "undo-request": UndoRequest,
    "stop-request": StopRequest,
    "blocklist": Blocklist,
    "audit-record": AuditRecord,
}


class RunMetadata(StrictModel):
    """What build-context hands to run-claude (``run.json``)."""

    version: Literal[1] = 1
    jobid: JobId
    repo: RepoName
    trigger_url: str
    trigger_type: TriggerType
    thread_number: int | None = None
    log_issue_number: int
    log_issue_url: str
    control_repo: RepoName
    task_path: str
    context_path: str
    diff_path: str | None = None
    context_file: str = Field(description="the merged context document (JSON)")
    claim_nonce: str | None = Field(
        None,
        description="the nonce in the log issue's job marker: the claiming run's own, which "
        "run-claude's progress report names",
    )


CONTRACT_MODELS["run-metadata"] = RunMetadata
CONTRACT_MODELS["approval-request"] = ApprovalRequest
