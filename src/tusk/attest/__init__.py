"""Each run's audit record signed keylessly with the workflow's identity, and verified.

- ``bundle``: A run's attestation as a Sigstore bundle (v0.3, JSON).
- ``continuation``: Apply's and undo's continuations of a run's audit chain, signed like the
  run.
- ``identity``: The GitHub Actions identity a signing certificate binds, as Fulcio writes
  it.
- ``keyless``: The job's signer, from the Actions environment.
- ``on_issue``: A run's attestation named on its log issue, and checked against the verified
  audit.
- ``rekor``: The bundle's transparency-log entry: the DSSE envelope uploaded to Rekor (v1
  API).
- ``sign_run``: Sign a run's audit record and store it.
- ``sigstore_verify``: A bundle verified by sigstore-python's ``Verifier`` against a
  ``trusted_root.json``.
- ``statement``: The in-toto statement a run's attestation signs, and DSSE's pre-
  authentication encoding.
- ``store``: The control repository's attestations, through GitHub's documented API.
- ``timestamp``: The bundle's signed timestamp: the DSSE signature stamped by an RFC 3161
  authority.
- ``timestamp_verify``: A bundle without a log entry, verified by its signed timestamp
  against a ``trusted_root.json``.
- ``trust_roots``: What ``--trust-root`` names, and which verifier checks each bundle against
  it.
- ``verify_issue``: ``tusk audit verify``'s judgement of a log issue's signed record.
"""
