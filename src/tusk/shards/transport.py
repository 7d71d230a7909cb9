"""A job's shards on their way from the dispatch to the context file.

Shared by receive-shard and merge-shards: the ``repository_dispatch`` event a
shard arrives in, the artifact it is stored as (``<jobid>-shard-<index>``),
and the context file a job's shards are joined into. The codec itself is
``tusk.shards.codec``.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tusk.contracts.models import SHARD_EVENT_TYPE, Shard
from tusk.errors import InputError
from tusk.github.gateway import Gateway
from tusk.shards import codec as shards

# A dispatch's client_payload is at most 64 KB; the whole event around it (repository,
# sender, installation) adds some. Anything much larger is not a dispatch event.
MAX_EVENT_BYTES = 1024 * 1024
# A dispatch event is a few levels deep (the payload is flat; repository.owner...);
# deeper JSON is hostile, and Python's parser would raise RecursionError on it.
MAX_EVENT_DEPTH = 32
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def json_depth(text: str) -> int:
    """How deeply ``text`` nests arrays and objects (pure; brackets in strings are text)."""
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    steps = (1 if char in "[{" else -1 for char in brackets)
    return max(itertools.accumulate(steps, initial=0))


def artifact_name(jobid: str, index: int) -> str:
    return f"{jobid}-shard-{index}"


def shard_from_event(event: Mapping[str, Any]) -> Shard:
    """The shard of a ``repository_dispatch`` event (or a bare ``client_payload``).

    Anything that is not one readable shard raises ``ShardError``, which the step
    records as a failure: a payload over GitHub's dispatch limit, an index not below
    the total, a field missing or malformed."""
    action = event.get("action")
    if action is not None and action != SHARD_EVENT_TYPE:
        raise InputError(
            f"this is a `{action}` dispatch, not `{SHARD_EVENT_TYPE}`",
            f"Run receive-shard only for `{SHARD_EVENT_TYPE}` events "
            f"(guard the job with `if: github.event.action == '{SHARD_EVENT_TYPE}'`).",
        )
    payload = event.get("client_payload", event)
    if isinstance(payload, Mapping):
        size = len(json.dumps(payload, separators=(",", ":")))
        if size > shards.PAYLOAD_MAX_CHARS:
            jobid, index = shards.best_guess_identity(payload)
            raise shards.ShardError(
                jobid,
                f"the dispatched client_payload is {size} characters of JSON; GitHub carries "
                f"at most {shards.PAYLOAD_MAX_CHARS}, so no real dispatch sent it",
                corrupt=[index] if index is not None else [],
            )
    return shards.parse_shard(payload, where="the dispatched client_payload")


def read_event(path: Path) -> Mapping[str, Any]:
    """The event (or bare payload) in ``path``. Unreadable is a failed shard: its job
    would wait for it forever, so the step records it (``ShardError``)."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_EVENT_BYTES + 1)
    except OSError as error:
        raise shards.ShardError(None, f"the shard payload {path} cannot be read: {error}") from None
    if len(raw) > MAX_EVENT_BYTES:
        raise shards.ShardError(
            None,
            f"the event in {path} is larger than {MAX_EVENT_BYTES // 1024} KB; a "
            "repository_dispatch event is far smaller",
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise shards.ShardError(None, f"the shard payload in {path} is not JSON: {error}") from None
    if json_depth(text) > MAX_EVENT_DEPTH:
        raise shards.ShardError(
            None,
            f"the event in {path} is nested deeper than {MAX_EVENT_DEPTH} levels; a "
            "repository_dispatch event is flat",
        )
    try:
        event = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise shards.ShardError(None, f"the shard payload in {path} is not JSON: {error}") from None
    if not isinstance(event, dict):
        raise shards.ShardError(None, f"the shard payload in {path} is not a JSON object")
    return event


def write_context(jobid: str, job_shards: list[Shard], context_file: Path) -> bytes:
    """Join, verify and validate a job's shards, then write the context document."""
    data = shards.join_shards(job_shards)
    shards.validate_context_document(data, jobid=jobid)
    context_file.parent.mkdir(parents=True, exist_ok=True)
    context_file.write_bytes(data)
    return data


def live_artifacts(gateway: Gateway, repo: str, name: str) -> list[dict[str, Any]]:
    """Every unexpired artifact named exactly ``name`` (several after duplicate deliveries)."""
    return [
        artifact
        for artifact in gateway.paginate(
            f"/repos/{repo}/actions/artifacts", params={"name": name}, item_key="artifacts"
        )
        if artifact.get("name") == name and not artifact.get("expired", False)
    ]
