"""Tusk: a controllable, auditable GitHub agent platform.

Each sub-package is one room of the design (ARCHITECTURE.md names every module):
``cli`` the application, ``contracts`` the models and settings, ``github`` the GitHub
edge, ``issues`` the issue-backed state, ``audit`` the hash chain, ``text`` text as GitHub
shows it, ``shards`` the dispatch payloads, then ``poller``, ``mcp`` (the agent's MCP
server), ``steps.<step>`` (one per composite action), ``sandbox`` (the local stand-ins)
and ``templates``.
"""


def _version() -> str:
    """The version setuptools-scm derived from git tags when Tusk was installed."""
    try:
        from tusk._version import version  # written at install time, never committed
    except ImportError:
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as installed_version

        try:
            return installed_version("tusk")
        except PackageNotFoundError:
            return "0.0.0+unknown"
    return str(version)


__version__ = _version()
