"""Contracts and configuration: the strict, versioned models passed between steps (the raw
context the poller fetched among them), ``tusk.yml`` and its secrets, each step's inputs, the
price table, the current pass, and their exported JSON Schemas."""
