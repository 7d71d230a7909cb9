"""The application: the ``tusk`` command and its subcommands (init, doctor, demo,
config, audit, shards).

Only this room may import the poller and the local stand-ins to wire them together.

- ``audit``: ``tusk audit verify FILE | LOG-ISSUE-URL``.
- ``config``: ``tusk config check [FILE]`` and ``tusk config schema``.
- ``demo``: ``tusk demo``.
- ``demo_approve``: ``tusk demo --approve``.
- ``demo_live``: ``tusk demo --live``.
- ``demo_signing``: The demo's keyless-signing stand-ins (OIDC endpoints, Fulcio with its CT
  log, Rekor) and their shared trust root.
- ``demo_variants``: ``tusk demo --variant NAME``.
- ``deploy``: The deployment.
- ``deployed``: The deployment's ``tusk.yml`` where the person is.
- ``doctor``: ``tusk doctor``.
- ``init``: ``tusk init DIR``.
- ``main``: The ``tusk`` command.
- ``record``: ``tusk record``.
- ``record_form``: An exchange with GitHub in the recordings' normalised form (pure).
- ``shards``: ``tusk shards split|join``.
- ``tusk_ref``: Which Tusk a control repository's callers run (``OWNER/REPO@REF``, this
  release by default) and the name of its settings file.
- ``usage``: ``tusk usage``.
"""
