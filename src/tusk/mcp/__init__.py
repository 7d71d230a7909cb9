"""The policy-enforcing MCP server (``tusk mcp serve``), the agent's only road to GitHub.

- ``cli``: the command; settings, tokens from the environment, the run's files.
- ``server``: wires the per-run ``Runtime`` and the server from settings and the context.
- ``dispatch``: the MCP server named ``github`` on the SDK's low-level server: the tool
  list, and one dispatch for every call; ``transport``: streamable HTTP on 127.0.0.1
  behind the run's bearer secret.
- ``tools``: every tool in one list (name, parameters, hints, description);
  ``read_tools`` / ``write_tools`` / ``push_tool``: each tool's plain functions;
  ``read_shapes``: what a read returns, neutralised.
- ``runtime``: what happens to every call: pass gate, scope, throttle, policy gate,
  staged mode; ``recorder``: the audit line, loop detection and the files run-claude
  watches; ``results``: serialising once, redacting the server's tokens, digests;
  ``outcomes``: what a write prepares and makes.
- ``git_push``: push_branch's git work; ``agent_git``: git in the agent's workspace,
  only as the agent (bundles and their broker); ``bundle`` and ``push_checks``: what a
  push may carry, pure; ``blocklist_watch``: the blocklist, checked again before writes.
- ``policy``: every write decision, pure; ``read_scope``: which repositories reads
  serve, pure; ``throttle``, ``loops``, ``passes``: pure helpers.
"""
