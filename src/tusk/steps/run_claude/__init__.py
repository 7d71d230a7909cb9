"""The run-claude step: the agent's run from box to write-up.

- ``box``: The agent's box.
- ``inputs``: What one run is given and what it gives back, and the files of its run folder.
- ``job``: One agent run from start to write-up.
- ``limits_check``: The limits across runs checked again before the agent starts
  (``limits.*``).
- ``main``: ``tusk run-claude``.
- ``proxy``: The model proxy.
- ``resume``: A later run on a thread resumes the conversation of the earlier ones (MISSION
  C3).
- ``runner_env``: What run-claude reads of the runner's environment, by name.
- ``session``: Claude Code's sessions.
- ``thread_status``: run-claude's side of the status on the thread
  (``tusk.github.thread_status``).
- ``workspace``: The agent's workspace.
- ``writeup``: The write-up on the log issue.
"""
