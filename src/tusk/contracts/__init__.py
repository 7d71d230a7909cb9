"""Contracts and configuration: the strict, versioned models passed between steps, ``tusk.yml``
and its secrets, the price table, the current pass, and their exported JSON Schemas."""
