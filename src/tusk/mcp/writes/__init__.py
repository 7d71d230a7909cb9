"""The agent's writes.

- ``operations``: each write a plain ``prepare_*`` and ``send_*``; creates sent once by
  nonce.
- ``outcomes``: what a write prepares and makes.
"""
