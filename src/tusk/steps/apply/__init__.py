"""The apply action: ``@bot apply <digest>`` / ``@bot discard``, verified from GitHub, and an
approved staged set applied exactly once (``tusk apply``).

- ``chain``: The run's audit chain, continued by its apply.
- ``decide``: Whether an approval command may act, and on which set (pure).
- ``github_side``: What the apply step reads from GitHub and writes there (through the
  gateway).
- ``main``: ``tusk apply``.
"""
