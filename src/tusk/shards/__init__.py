"""Shards: the codec of a context document in dispatch payloads, their transport as artifacts,
and the record of a job whose shards cannot be merged.

- ``codec``: The shard codec.
- ``failures``: A job whose shards cannot be merged, recorded in the control repository.
- ``transport``: A job's shards on their way from the dispatch to the context file.
"""
