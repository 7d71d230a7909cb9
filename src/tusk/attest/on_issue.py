"""A run's attestation named on its log issue, and checked against the verified audit.

The write-up adds a paragraph to the run's last audit part, under a hidden
``tusk:attestation`` marker saying which run it covers, how it was signed
(``github``: the route ``auto``/``github`` chose, GitHub's artifact attestations;
``sigstore``: Sigstore's public-good Fulcio and Rekor, chosen explicitly; both
stored through the control repository's attestations API; ``off``: not signed),
the attestation's id and which token stored it.
The marker only says where to look: ``check`` fetches the bundles that name the
audit chain's head, verifies each, and accepts one only when its signer is the
expected workflow and its subjects are the head *and* the transcript verified
from the issue. Pure but for the ``fetch`` it is given.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cryptography import x509

from tusk.attest.bundle import AttestationError, Verified, verify
from tusk.attest.identity import Expected
from tusk.attest.sign_run import Attested
from tusk.attest.statement import CHAIN, STAGED, TRANSCRIPT, subject_digests
from tusk.text.markers import neutralise_markers, parse_markers, render_marker

SIGNED = ("github", "sigstore")  # the modes a signed record is named with
ROUTES = {
    "github": "mode github",
    "sigstore": "mode sigstore: Sigstore's public-good instance, certificate in its public log",
}
PROOFS = {  # what shows when it was signed, as the log issue says it
    "logged": "logged in a transparency log",
    "timestamped": "its signature timestamped (RFC 3161)",
}
Fetch = Callable[[str], list[dict[str, Any]]]  # chain head → stored bundles naming it


# A bundle and the signer expected -> what it signs; raises AttestationError.
BundleVerifier = Callable[[Any, Expected], Verified]


def pem_verifier(roots: Sequence[x509.Certificate]) -> BundleVerifier:
    """Tusk's own verifier (``cryptography``) against PEM roots: no log entry checked."""
    return lambda bundle, expected: verify(bundle, roots=roots, expected=expected)


def attestation_comment(*, jobid: str, run: str, repository: str, done: Attested) -> str:
    ident = done.ident
    marker = render_marker(
        "attestation",
        {"jobid": jobid, "run": run, "mode": done.mode, **({"id": ident} if ident else {})},
    )
    # Short: it rides on an audit part, inside the room the part's frame keeps.
    if done.mode == "off":
        why = f": {neutralise_markers(done.reason[:300])}" if done.reason else ""
        text = f"not signed (attestation off{why}): the chain shows consistency, not origin."
    elif done.mode == "failed":
        text = f"not signed: signing failed ({neutralise_markers(done.reason[:300])})."
    else:
        route = ROUTES.get(done.mode, done.mode)
        token = f", by the {done.stored_by}'s token" if done.stored_by else ""
        when = f", {PROOFS[done.proof]}" if done.proof in PROOFS else ""
        # No id: the store's answer was lost and the attestation was found by its head.
        which = f"id {ident}" if ident else "found again by the chain head"
        text = (
            f"signed ({route}) with the agent workflow's OIDC identity{when}, stored in "
            f"{repository}'s attestations ({which}{token}) under the chain head; "
            "`tusk audit verify` checks it."
        )
    return f"{marker}\n**Attestation.** {text}\n"


@dataclass(frozen=True)
class Named:
    mode: str
    ident: int | None


def named(comments: Iterable[Mapping[str, Any]], *, jobid: str, run: str) -> Named | None:
    """What the log issue says about the run's attestation, or None when it says nothing."""
    for comment in comments:
        for marker in parse_markers(str(comment.get("body") or ""), "attestation"):
            if marker.get("jobid") == jobid and marker.get("run") == run:
                ident = marker.get("id")
                return Named(str(marker.get("mode")), int(ident) if ident else None)
    return None


@dataclass(frozen=True)
class Checked:
    ok: bool
    message: str
    verified: Verified | None = None


def check(
    *,
    head: str,
    transcript: str | None,
    fetch: Fetch,
    verifier: BundleVerifier,
    expected: Expected,
    staged: Collection[str] = (),
) -> Checked:
    """The first stored bundle that names ``head`` and holds, or why none does.
    ``staged``: the digests of the staged sets on the issue, hashed again from it; a
    signed staged set must be one of them."""
    bundles = fetch(head)
    if not bundles:
        return Checked(
            False,
            f"no attestation in {expected.repository} names the chain head sha256:{head}: "
            "the workflow did not sign this record (rewritten after the run?)",
        )
    problems = []
    for bundle in bundles:
        try:
            found = verifier(bundle, expected)
        except AttestationError as error:
            problems.append(str(error))
            continue
        digests = subject_digests(found.statement)
        if digests.get(CHAIN) != head:
            problems.append("the signed chain head is not the one on this issue")
            continue
        if transcript is not None and digests.get(TRANSCRIPT) != transcript:
            problems.append("the signed transcript digest is not the transcript's on this issue")
            continue
        if STAGED in digests and digests[STAGED] not in staged:
            problems.append(
                "the signed staged set is not on this issue as signed "
                "(its comments were edited or removed)"
            )
            continue
        where = found.identity
        return Checked(
            True,
            f"attestation verified: signed by {where.repository}/{where.workflow}@{where.ref} "
            f"running {where.signer}; {found.established}; checked by {found.checked_by}",
            found,
        )
    return Checked(False, "attestation does not hold: " + "; ".join(dict.fromkeys(problems)))
