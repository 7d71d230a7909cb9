"""Tusk: a controllable, auditable GitHub agent platform.

Each sub-package is one room of the design (ARCHITECTURE.md names every module):
``cli`` the application, ``contracts`` the models and settings, ``github`` the GitHub
edge, ``issues`` the issue-backed state, ``audit`` the hash chain, ``text`` text as GitHub
shows it, ``shards`` the dispatch payloads, then ``poller``, ``mcp`` (the agent's MCP
server), ``steps.<step>`` (one per composite action), ``sandbox`` (the local stand-ins)
and ``templates``.
"""

__version__ = "0.2.0"
"""This release. Its tag is ``v`` + this (``scripts/release_check.py`` holds the tag, this
and CHANGELOG.md's section to one another), and ``tusk init`` calls that tag by default."""

REPOSITORY = "tusk-platform/tusk"
"""The one repository Tusk is published from: control repositories call
``REPOSITORY/.github/workflows/tusk-*.yml@v<__version__>``."""
