"""The agent's writes.

- ``operations``: each write a plain ``prepare_*`` and ``send_*``; creates sent once by
  nonce.
- ``outcomes``: what a write prepares and makes.
- ``labels``: ``add_label``, one label on an issue or pull request the run opened.
"""
