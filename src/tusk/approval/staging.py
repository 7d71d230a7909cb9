"""The MCP server's side of approval mode: each write kept in the run folder, not made.

``StagingArea.keep`` appends one ``StagedOperation`` to ``RUN_DIR/approval/operations.jsonl``
(a push carries its bundle, base64); ``approval/run.json`` holds what the set needs
from the server (the nonce salt, the permissions, why approval was required, how
many days it may wait). The write-up joins both into the ``StagedSet``
(``load_kept``). Writes to the control repository's own state (the history line,
memory entries) are not GitHub writes to the people a run touches and are made as usual.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from tusk.approval.preview import preview_body
from tusk.approval.staged_set import (
    StagedOperation,
    StagedSet,
    expiry,
    set_comments,
    set_digest,
)
from tusk.contracts.models import PermissionConfig, RunMetadata

APPROVAL_DIR = "approval"
OPERATIONS_FILE = "operations.jsonl"
RUN_FILE = "run.json"
# A branch travels in the set on the log issue, so it must fit a few comments.
MAX_BUNDLE_BYTES = 256 * 1024


class KeptRun(BaseModel):
    """What the server knows about the set that the write-up does not."""

    model_config = ConfigDict(extra="forbid")

    nonce_salt: str
    reason: str
    days: float
    permissions: PermissionConfig


@dataclass
class StagingArea:
    """Keeps the staged writes of one run in ``run_dir``."""

    run_dir: Path
    nonce_salt: str
    reason: str
    days: float
    permissions: PermissionConfig

    @property
    def folder(self) -> Path:
        return self.run_dir / APPROVAL_DIR

    def keep(
        self,
        *,
        tool: str,
        args: Mapping[str, Any],
        target: str,
        summary: str,
        request: Mapping[str, Any],
        nonce: str | None,
    ) -> StagedOperation:
        """Append one staged write; a push's ``request['bundle_file']`` is read into it."""
        self.folder.mkdir(parents=True, exist_ok=True)
        run_file = self.folder / RUN_FILE
        if not run_file.exists():
            kept = KeptRun(
                nonce_salt=self.nonce_salt,
                reason=self.reason,
                days=self.days,
                permissions=self.permissions,
            )
            run_file.write_text(kept.model_dump_json(indent=1) + "\n", encoding="utf-8")
        sent = dict(request)
        bundle_file = sent.pop("bundle_file", None)
        diff_stat = sent.pop("diff_stat", None)
        bundle = bundle_sha = None
        if bundle_file is not None:
            data = Path(bundle_file).read_bytes()
            bundle = base64.b64encode(data).decode("ascii")
            bundle_sha = hashlib.sha256(data).hexdigest()
        operation = StagedOperation(
            seq=len(read_operations(self.run_dir)),
            tool=tool,
            args=dict(args),
            target=target,
            summary=summary,
            request=sent,
            nonce=nonce,
            bundle=bundle,
            bundle_sha256=bundle_sha,
            diff_stat=diff_stat,
        )
        with (self.folder / OPERATIONS_FILE).open("a", encoding="utf-8") as handle:
            handle.write(operation.model_dump_json() + "\n")
        return operation


def read_operations(run_dir: Path) -> list[StagedOperation]:
    path = run_dir / APPROVAL_DIR / OPERATIONS_FILE
    if not path.is_file():
        return []
    return [
        StagedOperation.model_validate_json(line)
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


def load_kept(run_dir: Path, run: RunMetadata, *, now: datetime) -> StagedSet | None:
    """The run's staged set, or None when the run staged nothing for approval."""
    run_file = run_dir / APPROVAL_DIR / RUN_FILE
    operations = read_operations(run_dir)
    if not run_file.is_file() or not operations:
        return None
    kept = KeptRun.model_validate_json(run_file.read_text(encoding="utf-8"))
    return StagedSet(
        jobid=run.jobid,
        repo=run.repo,
        trigger_url=run.trigger_url,
        thread_number=run.thread_number,
        control_repo=run.control_repo,
        log_issue_number=run.log_issue_number,
        log_issue_url=run.log_issue_url,
        created_at=now,
        expires_at=expiry(now, kept.days),
        nonce_salt=kept.nonce_salt,
        reason=kept.reason,
        permissions=kept.permissions,
        operations=tuple(operations),
    )


def bundle_bytes(operation: StagedOperation) -> bytes | None:
    """A push's bundle, checked against the sha256 the set pins."""
    if operation.bundle is None:
        return None
    data = base64.b64decode(operation.bundle, validate=True)
    if hashlib.sha256(data).hexdigest() != operation.bundle_sha256:
        raise ValueError("the bundle does not match its sha256")
    return data


def staged_answer(summary: str) -> str:
    """What the model reads about a write kept for approval."""
    return (
        "STAGED FOR APPROVAL: this run's writes wait for a person's approval, so nothing "
        f"was posted yet. Kept: {summary}. Carry on as if it had been done; at the end of the "
        "run the people of this thread see every kept write and decide."
    )


SET_FILE = "set.json"


def frozen_set(run_dir: Path, run: RunMetadata, *, now: datetime) -> StagedSet | None:
    """The run's staged set, made once: the first write-up fixes its time and so its
    digest, and every later write-up (a re-run, the clean-up step) reads the same set."""
    path = run_dir / APPROVAL_DIR / SET_FILE
    if path.is_file():
        return StagedSet.model_validate_json(path.read_text(encoding="utf-8"))
    staged = load_kept(run_dir, run, now=now)
    if staged is None:
        return None
    tmp = path.with_suffix(".tmp")
    tmp.write_text(staged.model_dump_json(), encoding="utf-8")
    tmp.replace(path)
    return staged


@dataclass(frozen=True)
class WriteUpParts:
    """What approval adds to a run's write-up."""

    log_comments: tuple[str, ...] = ()  # the staged set, on the log issue
    preview: str | None = None  # the preview, on the trigger's thread
    digest: str = ""


def write_up_parts(
    run_dir: Path, run: RunMetadata, *, ok: bool, bot: str, now: datetime | None = None
) -> WriteUpParts:
    """The staged set's comments for the run's log issue and its preview for the
    trigger's thread: none when the run staged nothing, or did not complete (a run cut
    short offers nothing to apply). A discussion gets no preview (approval is answered
    on issues and pull requests); its log issue still holds the set."""
    if not ok:
        return WriteUpParts()
    staged = frozen_set(run_dir, run, now=now or datetime.now(UTC))
    if staged is None:
        return WriteUpParts()
    on_thread = run.thread_number is not None and not run.trigger_type.startswith("discussion")
    return WriteUpParts(
        log_comments=tuple(set_comments(staged)),
        preview=preview_body(staged, bot=bot) if on_thread else None,
        digest=set_digest(staged),
    )
