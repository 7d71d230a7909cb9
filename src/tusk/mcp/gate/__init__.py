"""What every call meets before and after it reaches GitHub.

- ``policy``: every write decision, pure (M2-M7: the write gate, limits, duplicates).
- ``recorder``: the audit line, loop detection and the files run-claude watches.
- ``results``: a result serialised once, the server's tokens redacted; digests.
- ``posted``: what the agent posts, judged on its rendering.
- ``refusal``: the refusal codes.
- ``throttle`` (M6) and ``loops`` (M8): pure helpers.
- ``blocklist_watch``: the blocklist, checked again before writes.
- ``specs``: ``WriteSpec``, what a write tool is to the gate, written in its catalog entry.
"""
