"""Tusk: a controllable, auditable GitHub agent platform.

This package is the shared core (contracts, settings, the GitHub gateway, state
issues, markers, the Actions edge). The other parts are mapped under it by
pyproject.toml: ``tusk.poller`` (poller/), ``tusk.mcp_server`` (mcp_server/),
``tusk.sandbox`` (sandbox/), ``tusk.actions.<step>`` (actions/<step>/) and
``tusk.templates`` (templates/).
"""

__version__ = "0.1.0"
