"""What a write tool hands the runtime: the request it prepared, and what sending it made."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tusk.github.gateway import GitHubError


class OperationFailed(GitHubError):
    """A write that policy allowed but that could not be done; not a refusal."""

    code = "FAILED"


@dataclass(frozen=True)
class Prepared:
    """A write as it will be sent: checked, its text final. Staged mode records it."""

    summary: str  # what it does, in words
    request: Mapping[str, Any] = field(default_factory=dict)  # what is sent, as data
    nonce: str | None = None  # a create's, in its footer (tusk.github.once)
    # What preparing learned that the gate keys on (a push's commit): checked again with it.
    keyed: Mapping[str, Any] = field(default_factory=dict)
    held: object = None  # what ``send`` needs of what preparing took (a push's branch)


@dataclass(frozen=True)
class WriteOutcome:
    """What a performed write made; ``message`` is what the model reads."""

    message: str
    url: str | None = None
    created: str | None = None  # AuditRecord.created
    comment_id: int | None = None
    created_branch: bool = False
    number: int | None = None  # the issue or pull request it opened
    head: str | None = None  # a push: the commit it left the branch at
