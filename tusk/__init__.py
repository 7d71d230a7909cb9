"""Tusk: a controllable, auditable GitHub agent platform.

This package is the shared core (contracts, settings, the GitHub gateway, state
issues, markers, the Actions edge). The other parts are mapped under it by
pyproject.toml: ``tusk.poller`` (poller/), ``tusk.mcp_server`` (mcp_server/),
``tusk.sandbox`` (sandbox/), ``tusk.actions.<step>`` (actions/<step>/) and
``tusk.templates`` (templates/).
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
