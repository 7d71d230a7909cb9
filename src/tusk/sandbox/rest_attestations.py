"""REST handlers: a repository's artifact attestations (``repos/create-attestation``,
``repos/list-attestations``).

GitHub stores a Sigstore bundle and indexes it by the sha256 digests of the
subjects of the in-toto statement it signs; a listing by ``sha256:<hex>`` answers
every bundle naming that digest, newest first. Like GitHub, the stand-in keeps
the bundle as given: it checks no signature (the verifier does).
"""

from __future__ import annotations

import base64
import json
from typing import Any

from tusk.sandbox.rest import Call, Reply, handles, paginate
from tusk.sandbox.world import SandboxError


def _digests(bundle: Any) -> list[str]:
    try:
        statement = json.loads(base64.b64decode(bundle["dsseEnvelope"]["payload"]))
        return [f"sha256:{s['digest']['sha256']}" for s in statement["subject"]]
    except (KeyError, TypeError, ValueError):
        raise SandboxError(422, "The bundle's DSSE envelope holds no in-toto subjects") from None


@handles("repos/create-attestation")
def create_attestation(call: Call) -> Reply:
    repo = call.writable_repo()
    bundle = call.field("bundle")
    digests = _digests(bundle)
    call.world.attestation_seq += 1
    repo.attestations.append(
        {"id": call.world.attestation_seq, "bundle": bundle, "digests": digests}
    )
    return Reply(201, {"id": call.world.attestation_seq})


@handles("repos/list-attestations")
def list_attestations(call: Call) -> Reply:
    repo = call.repo()
    wanted = call.params["subject_digest"].lower()
    found = [a for a in reversed(repo.attestations) if wanted in a["digests"]]
    chunk, headers = paginate(call, found)
    return Reply(
        200,
        {
            "attestations": [
                {
                    "bundle": a["bundle"],
                    "repository_id": repo.id,
                    "bundle_url": f"{call.base}/repos/{repo.full_name}/attestations/{a['id']}",
                }
                for a in chunk
            ]
        },
        headers,
    )
