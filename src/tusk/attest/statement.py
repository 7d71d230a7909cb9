"""The in-toto statement a run's attestation signs, and DSSE's pre-authentication encoding.

The subjects are what ``tusk audit verify`` recomputes from the log issue: the
audit chain's head, the transcript's digest and, where the run staged writes,
the staged set's digest. The predicate names the run. Pure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PAYLOAD_TYPE = "application/vnd.in-toto+json"
PREDICATE_TYPE = "https://github.com/tusk-agent/tusk/attestation/run/v1"

# Subject names: what each digest is of.
CHAIN = "audit-chain-head"
TRANSCRIPT = "transcript"
STAGED = "staged-set"


@dataclass(frozen=True)
class RunClaims:
    """What the attestation says about one run (or an apply or undo continuing it)."""

    jobid: str
    run: str  # the write-up's nonce: which run of the job
    repository: str  # where the trigger was
    requester: str
    trigger: str  # the trigger's URL
    outcome: str
    cost_usd: float | None
    head: str  # the audit chain's head (hex sha256)
    transcript: str | None = None  # the transcript comments' digest (hex sha256)
    staged: str | None = None  # the staged set's digest (hex sha256)
    step: str = "run"  # run, apply or undo


def subjects(claims: RunClaims) -> list[dict[str, Any]]:
    found = [(CHAIN, claims.head), (TRANSCRIPT, claims.transcript), (STAGED, claims.staged)]
    return [
        {"name": f"{name}:{claims.jobid}", "digest": {"sha256": value}}
        for name, value in found
        if value
    ]


def statement(claims: RunClaims) -> dict[str, Any]:
    return {
        "_type": STATEMENT_TYPE,
        "subject": subjects(claims),
        "predicateType": PREDICATE_TYPE,
        "predicate": {
            "step": claims.step,
            "jobid": claims.jobid,
            "run": claims.run,
            "repository": claims.repository,
            "requester": claims.requester,
            "trigger": claims.trigger,
            "outcome": claims.outcome,
            "cost_usd": claims.cost_usd,
        },
    }


def payload(claims: RunClaims) -> bytes:
    """The statement as signed: sorted keys, compact, UTF-8."""
    return json.dumps(statement(claims), sort_keys=True, separators=(",", ":")).encode()


def pae(payload_type: str, body: bytes) -> bytes:
    """DSSE's pre-authentication encoding: what the signature is over."""
    kind = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(body), body)


def subject_digests(parsed: dict[str, Any]) -> dict[str, str]:
    """``{kind: sha256}`` of a parsed statement's subjects (kind: the name before ``:``)."""
    found: dict[str, str] = {}
    for subject in parsed.get("subject") or []:
        if not isinstance(subject, dict):
            continue
        name = str(subject.get("name") or "").partition(":")[0]
        value = (subject.get("digest") or {}).get("sha256")
        if name and isinstance(value, str):
            found[name] = value
    return found
