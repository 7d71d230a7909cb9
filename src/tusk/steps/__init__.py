"""One package per composite action (``actions/<step>/`` holds only its ``action.yml``).

- ``apply``: The apply action.
- ``build_context``: The model's context and the log issue from the poller's thread.
- ``go_away``: ``@bot go away``.
- ``merge_shards``: A job's shards joined and verified.
- ``receive_shard``: One shard validated and stored.
- ``run_claude``: The agent's run, from box to write-up.
- ``stop``: ``@bot stop``.
- ``undo``: ``@bot undo``.
"""
