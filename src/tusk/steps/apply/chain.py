"""The run's audit chain, continued by its apply: read from the log issue, posted back.

``seed`` writes the run's chain (the latest complete audit set of its job on the
log issue, verified) into the apply's ``audit.jsonl``, so the engine's records
follow the run's last one. ``post`` puts the whole continued chain on the log
issue as a new audit set; ``tusk audit verify`` (the latest complete set) then
covers run and apply.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tusk.approval.staged_set import StagedSet
from tusk.attest.continuation import signed_continuation
from tusk.attest.sign_run import Attested, Signer
from tusk.attest.statement import RunClaims
from tusk.audit.chain import head_hash, read_records
from tusk.audit.on_issue import audit_comments, audit_sets, joined_text, verify_set
from tusk.github.gateway import Gateway
from tusk.github.once import create_once
from tusk.text.markers import parse_markers


def seed(comments: Sequence[dict[str, Any]], path: Path, *, jobid: str) -> str:
    """Write the job's chain to ``path``; returns why it cannot be (fail closed) or ''."""
    if path.exists():
        return ""  # a rerun of this apply continues its own file
    found = [s for s in audit_sets(comments) if s.jobid == jobid and s.complete]
    if not found:
        return "the run's audit records are not on its log issue"
    latest = found[-1]
    verdict = verify_set(latest)
    text = joined_text(latest)
    if not verdict.ok or text is None:
        return f"the run's audit chain on its log issue does not verify ({verdict.message})"
    path.write_text(text if text.endswith("\n") or not text else text + "\n", encoding="utf-8")
    return ""


def post(
    gateway: Gateway,
    staged: StagedSet,
    path: Path,
    *,
    run: str,
    bot: str,
    claims: RunClaims | None = None,
    signing: tuple[Signer | None, Attested | None] = (None, None),
) -> None:
    """The continued chain on the log issue, each part once (found by run and part);
    with ``claims`` its last part names the continuation's attestation."""
    records = read_records(path)
    bodies = audit_comments(
        path.read_text(encoding="utf-8"),
        jobid=staged.jobid,
        run=run,
        records=len(records),
        head=head_hash(records),
        log_url=staged.log_issue_url,
    )
    if claims is not None:
        bodies = signed_continuation(
            bodies,
            gateway=gateway,
            claims=claims,
            repository=staged.control_repo,
            signer=signing[0],
            unsigned=signing[1],
        )
    repo, number = staged.control_repo, staged.log_issue_number
    issue = f"/repos/{repo}/issues/{number}/comments"
    for index, body in enumerate(bodies, start=1):
        # Not post_marked_comment: an audit part's marker is matched by its run and part
        # number together, not by one nonce key.
        def find(index: int = index) -> dict[str, Any] | None:
            for comment in gateway.paginate(issue):
                if str((comment.get("user") or {}).get("login") or "").lower() != bot.lower():
                    continue
                for marker in parse_markers(str(comment.get("body") or ""), "audit"):
                    if marker.get("run") == run and marker.get("part") == index:
                        return dict(comment)
            return None

        def send(body: str = body) -> dict[str, Any]:
            return dict(gateway.post(issue, json={"body": body}, may_repeat=False).body)

        if find() is None:
            create_once(send, find, sleep=gateway.sleep, what=f"audit part {index} of the apply")
