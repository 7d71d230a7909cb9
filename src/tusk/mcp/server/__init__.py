"""The MCP server's wiring.

- ``cli``: ``tusk mcp serve`` (and ``tusk mcp apply``'s entry); settings, tokens from
  the environment, the run's files.
- ``wiring``: builds the per-run ``Runtime`` and the server from settings and the context.
- ``mcp_server``: the MCP server named ``github`` on the SDK's low-level server: the tool
  list, and one handler for every call.
- ``transport``: streamable HTTP on 127.0.0.1 behind the run's bearer secret.
- ``catalog``: every tool in one list (name, parameters, hints, description).
- ``runtime``: what happens to every call: pass gate, scope, throttle, policy gate,
  record-only mode.
"""
