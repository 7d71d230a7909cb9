"""Apply's and undo's continuations of a run's audit chain, signed like the run.

An apply or an undo appends records to the run's chain and posts the whole
chain again under its own run id (``apply-<job>``, ``undo-<job>``). Its last
part gets the same attestation paragraph as a run's: the statement's subjects
are the continued chain's head (and, for an apply, the staged set's digest),
signed by the command workflow's job. ``tusk audit verify`` expects that
workflow (``--command-workflow``) for a continuation.
"""

from __future__ import annotations

from collections.abc import Sequence

from tusk.attest.on_issue import attestation_comment
from tusk.attest.sign_run import Attested, Signer, attest, audit_digests
from tusk.attest.statement import RunClaims
from tusk.github.gateway import Gateway

CONTINUATIONS = ("apply-", "undo-")  # the run ids of a chain's continuations


def is_continuation(run: str) -> bool:
    return run.startswith(CONTINUATIONS)


def signed_continuation(
    bodies: Sequence[str],
    *,
    gateway: Gateway,
    claims: RunClaims,
    repository: str,
    signer: Signer | None,
    unsigned: Attested | None = None,
) -> list[str]:
    """``bodies`` (a continuation's audit parts) with the attestation named under the
    last, signing first when there is a signer. ``claims.head`` is filled in here."""
    digests = audit_digests(bodies)
    if digests is None:
        return list(bodies)
    head = digests[0]
    if signer is not None:
        try:
            done = attest(gateway, repository, _with_head(claims, head), signer)
        except Exception as error:  # the command goes on, and says signing failed
            done = Attested(mode="failed", head=head, reason=f"{type(error).__name__}: {error}")
    else:  # off, or why signing could not be had
        done = (unsigned or Attested(mode="off")).model_copy(update={"head": head})
    body = attestation_comment(jobid=claims.jobid, run=claims.run, repository=repository, done=done)
    return [*bodies[:-1], bodies[-1] + "\n" + body]


def _with_head(claims: RunClaims, head: str) -> RunClaims:
    from dataclasses import replace

    return replace(claims, head=head)
