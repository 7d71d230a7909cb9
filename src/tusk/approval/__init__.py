"""Approve, then apply: a run's writes staged, previewed, approved by a person and applied.

- ``staged_set``: the staged set (every write a run would make, a pushed branch as a
  bundle) as one strict model, its digest, and its comments on the log issue; pure.
- ``staging``: the MCP server's side: each staged write kept in the run folder; the set
  frozen once and what it adds to the write-up.
- ``preview`` (pure) and ``on_thread``: the preview on the trigger's thread, posted once.
- ``apply_report``: what applying a set made, written by the engine, read by the step.
"""
