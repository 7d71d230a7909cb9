"""The run's attestation in its write-up: signed once, named under the last audit part.

The statement's subjects are what the audit parts about to be posted announce
(the chain head, the transcript's digest) and the staged set's digest its
comments name, so what is signed is what ``tusk audit verify`` recomputes from
the log issue. Signing that fails does not stop the write-up: the part says so.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Protocol

from tusk.attest.on_issue import attestation_comment
from tusk.attest.sign_run import Attested, Signer, attest, audit_digests
from tusk.attest.statement import RunClaims
from tusk.contracts.models import RunMetadata
from tusk.contracts.pricing import Spend
from tusk.github.gateway import Gateway
from tusk.issues.run_facts import RunFacts
from tusk.steps.run_claude.writeup.outcome import Outcome
from tusk.steps.run_claude.writeup.summary import Part
from tusk.text.markers import parse_markers


class WriteUpState(Protocol):
    """What this reads of ``publish.WriteUpState`` (which imports this module)."""

    run: RunMetadata
    nonce: str
    outcome: Outcome | None
    facts: RunFacts | None
    spend: Spend | None
    attestation: Attested | None


def with_attestation(
    parts: list[Part], state: WriteUpState, gateway: Gateway, signer: Signer | None
) -> tuple[list[Part], Attested | None]:
    """``parts`` with the attestation named under the audit, and the attestation (the
    state's when it has one: a redone write-up does not sign again)."""
    audit = [part.body for part in parts if part.key.startswith("audit-")]
    digests = audit_digests(audit)
    if digests is None:
        return parts, state.attestation  # no audit posted (a setup failure): nothing to sign
    done = state.attestation
    if done is None and signer is None:
        done = Attested(mode="off", head=digests[0])
    elif done is None and signer is not None:
        try:
            done = attest(gateway, state.run.control_repo, claims(state, parts, *digests), signer)
        except Exception as failure:  # the write-up goes on, and says signing failed
            reason = f"{type(failure).__name__}: {failure}"
            done = Attested(mode="failed", head=digests[0], reason=reason[:300])
    assert done is not None
    body = attestation_comment(
        jobid=state.run.jobid, run=state.nonce, repository=state.run.control_repo, done=done
    )
    # On the last audit part (not a comment of its own): what a reader of the audit needs.
    last = max(i for i, part in enumerate(parts) if part.key.startswith("audit-"))
    named = dataclasses.replace(parts[last], body=parts[last].body + "\n" + body)
    return [*parts[:last], named, *parts[last + 1 :]], done


def claims(
    state: WriteUpState, parts: Sequence[Part], head: str, transcript: str | None
) -> RunClaims:
    staged = next(
        (m for p in parts if p.key.startswith("approval-") for m in set_digests(p.body)), None
    )
    return RunClaims(
        jobid=state.run.jobid,
        run=state.nonce,
        repository=state.run.repo,
        requester=state.facts.requester if state.facts is not None else "",
        trigger=state.run.trigger_url,
        outcome=state.outcome.kind if state.outcome is not None else "cancelled",
        cost_usd=state.spend.cost_usd if state.spend is not None else None,
        head=head,
        transcript=transcript,
        staged=staged,
    )


def set_digests(body: str) -> list[str]:
    """The staged set's digest its comment's marker names (hex), if any."""
    return [
        str(m["digest"]).removeprefix("sha256:")
        for m in parse_markers(body, "approval")
        if m.get("digest")
    ]
