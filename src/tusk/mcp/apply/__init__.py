"""The approved-set engine (``tusk mcp apply``).

- ``engine``: an approved staged set applied once under the run's policy: each write
  prepared again and sent only as approved, every create looked for by its nonce first,
  the run's audit chain continued.
- ``cli``: the command's edge.
"""
