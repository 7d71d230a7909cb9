"""The merge-shards step: a job's shards joined and verified (A2).

- ``main``: ``tusk merge-shards``.
- ``merge_shards``: merge-shards.
"""
