"""The agent's workspace: the clone and its credential check, the context files and
the first prompt.

- ``clone``: The agent's workspace.
- ``prepare``: The agent's workspace made ready.
"""
