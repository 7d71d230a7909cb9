"""Shards: the codec of a context document in dispatch payloads, their transport as artifacts,
and the record of a job whose shards cannot be merged."""
