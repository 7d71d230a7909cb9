"""``tusk audit verify``'s judgement of a log issue's signed record.

The chain and transcript are verified from the issue first (``tusk.audit.on_issue``);
then the attestation of the set verified: a run's, signed by the control
repository's agent workflow, or an apply's or undo's continuation, signed by its
command workflow. A continuation was seeded from what the issue held, so the
run's own set is checked too, with its own attestation, and must be where the
continuation's chain starts. Pure but for the ``fetch`` it is given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tusk.approval.staged_set import digests_on_issue
from tusk.attest import trust_roots
from tusk.attest.bundle import AttestationError
from tusk.attest.continuation import is_continuation
from tusk.attest.identity import Expected
from tusk.attest.on_issue import ROUTES, SIGNED, Fetch, check, named
from tusk.audit.on_issue import AuditSet, audit_sets, joined_text, verify_set

COMMAND_WORKFLOW = ".github/workflows/go-away.yml"  # tusk init's caller of apply and undo


@dataclass(frozen=True)
class Wanted:
    """What the operator asked of the signature."""

    trust_root: Path | None = None
    workflow: str = Expected.workflow
    command_workflow: str = COMMAND_WORKFLOW
    tusk_ref: str | None = None
    require: bool = False


def signed_verdict(
    comments: Sequence[Mapping[str, Any]],
    found: AuditSet,
    head: str,
    repository: str,
    fetch: Fetch,
    wanted: Wanted,
) -> tuple[bool, str]:
    """Whether the record's attestation holds (or may be missing), and what to say."""
    expected = Expected(repository, workflow=wanted.workflow, tusk_ref=wanted.tusk_ref)
    if not is_continuation(found.run):
        return _one(comments, found, head, found.transcript, fetch, wanted, expected)
    command = replace(expected, workflow=wanted.command_workflow)
    ok, said = _one(comments, found, head, None, fetch, wanted, command)
    if not ok:
        return ok, f"{found.run}: {said}"
    runs = [
        s
        for s in audit_sets(comments)
        if s.jobid == found.jobid and s.complete and not is_continuation(s.run)
    ]
    if not runs:
        return not wanted.require, f"{found.run}: {said}; the run's own audit is not on the issue"
    own = runs[-1]
    verdict = verify_set(own)
    prefix, whole = joined_text(own), joined_text(found)
    if not verdict.ok or prefix is None or whole is None or not whole.startswith(prefix):
        return False, (
            f"{found.run}: {said}; but it does not continue the run's own chain "
            f"(run {own.run}) as that is on the issue"
        )
    ok, first = _one(comments, own, verdict.head, own.transcript, fetch, wanted, expected)
    return ok, f"{found.run}: {said}; run {own.run}: {first}"


def _one(
    comments: Sequence[Mapping[str, Any]],
    found: AuditSet,
    head: str,
    transcript: str | None,
    fetch: Fetch,
    wanted: Wanted,
    expected: Expected,
) -> tuple[bool, str]:
    said = named(comments, jobid=found.jobid, run=found.run)
    if said is None or said.mode not in SIGNED:
        why = {None: "names no attestation", "off": "signing was off"}.get(
            said.mode if said else None, "signing failed"
        )
        return not wanted.require, f"{why}: the record is not signed by the workflow"
    if wanted.trust_root is None:
        return False, (
            "signed, but no trust root was given to check it against: pass "
            "--trust-root (or set TUSK_ATTEST_TRUST_ROOT)"
        )
    try:
        verifier = trust_roots.bundle_verifier(wanted.trust_root)
    except AttestationError as error:
        return False, str(error)
    checked = check(
        head=head,
        transcript=transcript,
        fetch=fetch,
        verifier=verifier,
        expected=expected,
        staged=digests_on_issue(comments, jobid=found.jobid),
    )
    return checked.ok, f"{checked.message}; the log issue names {ROUTES[said.mode]}"
