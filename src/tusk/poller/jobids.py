"""Deterministic job ids: one trigger, one id, however often it is seen.

The id is derived from the repository and the trigger node alone, so a
re-run after a crash, an edited comment or a re-delivered notification
produces the same id and the downstream exactly-once checks hold (MISSION
P1, P8; ENGINEERING §2). It stays readable: ``alice-widgets-ic-<hash>``.
"""

from __future__ import annotations

import hashlib
import re

from tusk.contracts.models import JOBID_PATTERN, TriggerType

_TYPE_CODES: dict[str, str] = {
    "issue_body": "ib",
    "pull_request_body": "pb",
    "issue_comment": "ic",
    "review": "rv",
    "review_comment": "rc",
    "discussion_body": "db",
    "discussion_comment": "dc",
}
_SLUG_CHARS = 40
_HASH_CHARS = 20


def job_id(repo: str, trigger_type: TriggerType, node_id: str) -> str:
    """The job id of the trigger ``node_id`` (its REST id, or GraphQL id for discussions)."""
    key = "\0".join((repo.lower(), trigger_type, str(node_id)))
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:_HASH_CHARS]
    slug = re.sub(r"[^a-z0-9]+", "-", repo.lower()).strip("-")[:_SLUG_CHARS].strip("-")
    jobid = f"{slug or 'repo'}-{_TYPE_CODES[trigger_type]}-{digest}"
    assert re.fullmatch(JOBID_PATTERN, jobid), jobid  # the slug rules above guarantee it
    return jobid
