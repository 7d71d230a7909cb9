"""The staged set: every write one run would make, pinned by one digest (pure).

In approval mode the MCP server performs none of the agent's GitHub writes: it
keeps each one as it would be sent (``StagedOperation``: the tool, the
arguments the policy checked, the request with its footer and nonce, and for a
push the branch as a git bundle). At the end of the run the write-up joins them
into a ``StagedSet`` and posts it on the run's log issue, where the apply job
loads it. The digest is the sha256 of the set's canonical JSON: an approval
names it, and whatever does not hash to the approved digest is never applied
(gh-aw#61112's rules: pinned by digest, the approval's wording never changes the
operation, a mismatch fails closed).

The set's comments on the log issue (``set_comments``) carry the canonical JSON
byte for byte in code blocks under a hidden ``tusk:approval`` marker (digest,
part, parts); ``read_set`` joins the bot's parts back and re-hashes them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any, Final, Literal

from pydantic import Field, ValidationError

from tusk.audit.chain import canonical_json
from tusk.audit.on_issue import slices
from tusk.contracts.models import JobId, PermissionConfig, RepoName, StrictModel
from tusk.text.markers import parse_markers, render_marker

SET_VERSION: Final = 1
BODY_LIMIT = 65_536
FRAME_ROOM = 1_500  # the marker, the heading, <details> and the fence around each slice
OPEN_FENCE = "```json\n"
CLOSE_FENCE = "\n```\n"
DIGEST_PREFIX = "sha256:"


class StagedOperation(StrictModel):
    """One write as it will be made once approved."""

    seq: int = Field(ge=0)
    tool: str
    args: dict[str, Any] = Field(
        description="the arguments the policy checked, as the agent gave them"
    )
    target: str = Field(description="what it writes to, as the audit names it")
    summary: str
    request: dict[str, Any] = Field(description="what will be sent: body with footer and nonce")
    nonce: str | None = None
    bundle: str | None = Field(None, description="push_branch: the branch as a git bundle, base64")
    bundle_sha256: str | None = None
    diff_stat: str | None = Field(None, description="push_branch: git diff --stat against base")


class StagedSet(StrictModel):
    """Everything one run would have written, for one approval."""

    version: Literal[1] = SET_VERSION
    jobid: JobId
    repo: RepoName = Field(description="the trigger's repository")
    trigger_url: str
    thread_number: int | None
    control_repo: RepoName
    log_issue_number: int
    log_issue_url: str
    created_at: datetime
    expires_at: datetime
    nonce_salt: str = Field(
        description="the run's nonce salt: the same writes carry the same nonces"
    )
    reason: str = Field(description="why the run needed approval (configuration or marker)")
    permissions: PermissionConfig
    operations: tuple[StagedOperation, ...]

    def expired(self, now: datetime) -> bool:
        return now >= self.expires_at


def canonical(staged: StagedSet) -> str:
    """The one spelling of a set that its digest is taken over."""
    return canonical_json(staged.model_dump(mode="json"))


def digest_of_text(text: str) -> str:
    return DIGEST_PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()


def set_digest(staged: StagedSet) -> str:
    """``sha256:<64 hex>`` over the canonical set."""
    return digest_of_text(canonical(staged))


def expiry(created_at: datetime, days: float) -> datetime:
    return created_at + timedelta(days=days)


def normal_digest(text: str) -> str | None:
    """A digest as a person types it (``sha256:`` optional, any case), or None."""
    value = text.strip().lower()
    value = value.removeprefix(DIGEST_PREFIX)
    if len(value) == 64 and all(ch in "0123456789abcdef" for ch in value):
        return DIGEST_PREFIX + value
    return None


# --------------------------------------------------------------------------- on the log issue


def set_comments(staged: StagedSet, *, limit: int = BODY_LIMIT) -> list[str]:
    """The comments that carry ``staged`` on its log issue, in order."""
    text = canonical(staged)
    digest = digest_of_text(text)
    pieces = slices(text, limit - FRAME_ROOM) or [""]
    total = len(pieces)
    bodies = []
    for index, piece in enumerate(pieces, start=1):
        marker = render_marker(
            "approval",
            {"jobid": staged.jobid, "digest": digest, "part": index, "parts": total},
        )
        bodies.append(
            f"{marker}\n"
            f"### ⏸️ Staged for approval · part {index} of {total}\n\n"
            f"Digest `{digest}`: {len(staged.operations)} write(s), applied only after "
            f"`apply {digest}` from someone allowed, before {staged.expires_at:%Y-%m-%d %H:%M} "
            "UTC.\n\n"
            f"<details><summary>staged set (canonical JSON)</summary>\n\n"
            f"{OPEN_FENCE}{piece}{CLOSE_FENCE}\n</details>\n"
        )
    return bodies


def _piece(body: str) -> str | None:
    start = body.find(OPEN_FENCE)
    end = body.rfind(CLOSE_FENCE)
    if start == -1 or end < start + len(OPEN_FENCE):
        return None
    return body[start + len(OPEN_FENCE) : end]


def digests_on_issue(comments: Iterable[Mapping[str, Any]], *, jobid: str) -> set[str]:
    """The digests (hex) of job ``jobid``'s staged sets as their comments on a log issue
    hold them now: each set's parts joined and hashed again, whatever its markers say."""
    sets: dict[str, tuple[int, dict[int, str]]] = {}
    for comment in comments:
        body = str(comment.get("body") or "")
        for marker in parse_markers(body, "approval"):
            if marker.get("jobid") != jobid:
                continue
            try:
                part, total = int(marker["part"]), int(marker["parts"])
            except (KeyError, TypeError, ValueError):
                continue
            piece = _piece(body)
            found = sets.setdefault(str(marker.get("digest")), (total, {}))
            if piece is not None and total == found[0]:
                found[1].setdefault(part, piece)
    return {
        hashlib.sha256("".join(p[n] for n in range(1, t + 1)).encode("utf-8")).hexdigest()
        for t, p in sets.values()
        if sorted(p) == list(range(1, t + 1))
    }


class SetProblem(ValueError):
    """The set cannot be loaded as approved; the message says why (fail closed)."""


def read_set(comments: Iterable[Mapping[str, Any]], *, digest: str, bot: str) -> StagedSet:
    """The set with ``digest`` from a log issue's comments, the bot's only; raises
    ``SetProblem`` unless its parts are all there and hash to ``digest``."""
    parts: dict[int, str] = {}
    total = None
    for comment in comments:
        author = str((comment.get("user") or {}).get("login") or "")
        if author.lower() != bot.lower():
            continue
        body = str(comment.get("body") or "")
        for marker in parse_markers(body, "approval"):
            if marker.get("digest") != digest:
                continue
            try:
                part, parts_total = int(marker["part"]), int(marker["parts"])
            except (KeyError, TypeError, ValueError):
                continue
            piece = _piece(body)
            if piece is not None:
                parts.setdefault(part, piece)
                total = parts_total
    if total is None:
        raise SetProblem(f"no staged set with digest {digest} on the log issue")
    missing = [n for n in range(1, total + 1) if n not in parts]
    if missing:
        raise SetProblem(f"part(s) {', '.join(map(str, missing))} of the staged set are missing")
    text = "".join(parts[n] for n in range(1, total + 1))
    if digest_of_text(text) != digest:
        raise SetProblem("the staged set on the log issue does not hash to the approved digest")
    try:
        staged = StagedSet.model_validate_json(text)
    except ValidationError as error:
        raise SetProblem(
            f"the staged set is not readable ({error.error_count()} problem(s))"
        ) from None
    if set_digest(staged) != digest:
        raise SetProblem("the staged set does not re-serialise to its digest")
    return staged
