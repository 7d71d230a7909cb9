"""The policy-enforcing MCP server (``tusk mcp serve``), the agent's only road to GitHub.

- ``cli``: the command; settings, tokens from the environment, the run's files.
- ``server``: builds the per-run ``Runtime`` and the ``MCPServer`` named ``github``.
- ``runtime``: what happens to every call: throttle, policy gate, staged mode,
  audit, loop detection, token scrubbing.
- ``read_tools`` / ``write_tools`` / ``git_push``: the tools, by concern.
- ``agent_git``: git in the agent's workspace, only as the agent (bundles and
  their broker); ``bundle`` and ``push_checks``: what a push may carry, pure;
  ``blocklist_watch``: the blocklist, checked again before writes.
- ``policy``: every write decision, pure; ``read_scope``: which repositories reads
  serve, pure; ``throttle``, ``loops``: pure helpers.
"""
