"""The bundle's signed timestamp: the DSSE signature stamped by an RFC 3161 authority.

A Fulcio certificate lives ten minutes, so a verifier must know the signature was
made while it was valid. Sigstore's public-good route proves that with the
transparency log's integrated time; GitHub's route for a private repository
keeps no log and asks GitHub's timestamp authority instead, as ``actions/attest``
does. The request is built and the answer read with ``rfc3161-client``
(sigstore-python's own); the authority is reached at ``TUSK_TSA_URL`` (the
stand-in) or GitHub's, not through the gateway, as it is not GitHub's REST API.
A timestamp creates nothing, so asking again after a lost answer is harmless.
"""

from __future__ import annotations

from collections.abc import Callable

import requests
from rfc3161_client import TimestampRequestBuilder, decode_timestamp_response
from rfc3161_client.tsp import PKIStatus

TSA_URL = "TUSK_TSA_URL"
GITHUB_TSA = "https://timestamp.githubapp.com"  # actions/attest: private and internal ones
TIMEOUT = 30

# the DSSE signature -> a TimeStampResp (DER) over it
TimestampAuthority = Callable[[bytes], bytes]


def timestamp_authority(base: str) -> TimestampAuthority:
    """A ``TimestampAuthority`` at ``base`` (``POST /api/v1/timestamp``)."""

    def stamp(signature: bytes) -> bytes:
        request = TimestampRequestBuilder().data(signature).cert_request(cert_request=True).build()
        session = requests.Session()
        session.trust_env = False  # as the gateway's: no proxy variables or .netrc
        answer = session.post(
            f"{base.rstrip('/')}/api/v1/timestamp",
            data=request.as_bytes(),
            headers={"Content-Type": "application/timestamp-query"},
            timeout=TIMEOUT,
        )
        if answer.status_code != 200:
            raise RuntimeError(
                f"the timestamp authority refused the request ({answer.status_code})"
            )
        try:
            response = decode_timestamp_response(answer.content)
        except ValueError:
            raise RuntimeError("the timestamp authority's answer is not a TimeStampResp") from None
        if response.status not in (PKIStatus.GRANTED, PKIStatus.GRANTED_WITH_MODS):
            said = "; ".join(response.status_string) or f"status {response.status}"
            raise RuntimeError(f"the timestamp authority did not grant a timestamp ({said})")
        if response.tst_info.nonce != request.nonce:
            raise RuntimeError("the timestamp authority answered another request (nonce)")
        return response.as_bytes()

    return stamp
