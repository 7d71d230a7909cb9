"""Builders shared by the shard tests: context documents and their shard payload lines."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime
from typing import Any

from tusk.contracts.models import Shard
from tusk.shards import codec as shards


def context_doc(jobid: str = "job-0001", raw: Any = None, *, repo: str = "alice/widgets") -> bytes:
    """A valid context document (JSON bytes) carrying ``raw``."""
    payload = raw if raw is not None else {"comments": ["a"] * 3}
    doc = {
        "version": 1,
        "jobid": jobid,
        "repo": repo,
        "actor": "alice",
        "trust_level": "owner",
        "permission_config": {},
        "trigger": {
            "type": "issue_comment",
            "id": "101",
            "url": f"https://github.com/{repo}/issues/1#issuecomment-101",
            "number": 1,
            "author": "alice",
            "body": "@tusk-bot please fix the typo",
            "created_at": "2026-11-30T06:00:00Z",
        },
        # ``raw`` travels as the thread's body, inside a valid raw context.
        "raw": {"kind": "issue", "thread": {"number": 1, "body": json.dumps(payload)}},
        "timestamp": datetime(2026, 11, 30, 6, 0, tzinfo=UTC).isoformat(),
    }
    return json.dumps(doc).encode()


def noisy(seed: str, size: int = 2000) -> str:
    """Text that barely compresses, so a document of it spans several shards."""
    rng = random.Random(seed)
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789 ") for _ in range(size))


def shards_of(doc: bytes, jobid: str = "job-0001", max_bytes: int = 64) -> list[Shard]:
    return shards.split_into_shards(jobid, shards.encode_context(doc), max_bytes)


def payload_lines(job_shards: list[Shard]) -> list[str]:
    return [json.dumps(shards.shard_payload(s), separators=(",", ":")) for s in job_shards]
