"""The policy-enforcing MCP server (``tusk mcp serve``), the agent's only road to GitHub.

Its rooms:

- ``server``: the wiring: the command, the per-run ``Runtime`` and the server built from
  settings and the context, the MCP server itself, its transport and the tool catalog.
- ``gate``: what every call meets: the write policy, the audit record, what the agent
  posts judged on its rendering, the refusal codes, the read throttle, loop detection
  and the blocklist watched again before writes.
- ``reads``: each read's plain function, its results neutralised, and which
  repositories reads serve.
- ``writes``: each write's plain ``prepare_*`` and ``send_*``, and what a write makes.
- ``push``: the push of a branch (the ``push_branch`` tool), checked and pushed, or
  kept for approval.
- ``apply``: the approved-set engine (``tusk mcp apply``).
"""
