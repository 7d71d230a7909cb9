"""Tusk: a controllable, auditable GitHub agent platform.

Each sub-package is one room of the design (ARCHITECTURE.md names every module):
``cli`` the application, ``contracts`` the models and settings, ``github`` the GitHub
edge, ``issues`` the issue-backed state, ``audit`` the hash chain, ``text`` text as GitHub
shows it, ``shards`` the dispatch payloads, then ``poller``, ``mcp`` (the agent's MCP
server), ``steps.<step>`` (one per composite action), ``sandbox`` (the local stand-ins)
and ``templates``.

- ``actions_edge``: The GitHub Actions edge.
- ``approval``: Approve, then apply.
- ``attest``: Each run's audit record signed keylessly with the workflow's identity, and
  verified.
- ``audit``: The audit log.
- ``cli``: The application.
- ``contracts``: Contracts and configuration.
- ``errors``: One exception hierarchy for everything Tusk reports to people.
- ``git``: git as Tusk runs it.
- ``github``: The GitHub edge.
- ``issues``: The issue-backed state.
- ``poller``: Notifications to dispatch (the poller's cycle).
- ``shards``: Shards.
- ``steps``: One package per composite action.
- ``templates``: The Jinja templates of what people read.
- ``text``: Text as GitHub shows it.
- ``version``: The version this Tusk reports.
"""

__version__ = "0.2.0"
"""This release. Its tag is ``v`` + this (``scripts/release_check.py`` holds the tag, this
and CHANGELOG.md's section to one another), and ``tusk init`` calls that tag by default."""

REPOSITORY = "tusk-platform/tusk"
"""The one repository Tusk is published from: control repositories call
``REPOSITORY/.github/workflows/tusk-*.yml@v<__version__>``."""
