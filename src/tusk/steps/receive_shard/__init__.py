"""The receive-shard step: one shard validated and stored (A1).

- ``main``: ``tusk receive-shard``.
- ``receive_shard``: receive-shard.
"""
