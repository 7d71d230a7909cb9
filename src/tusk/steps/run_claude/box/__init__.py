"""The agent's box: the run's own user and folders, how its processes start, the
network it gets, and everything a run leaves taken down again.

- ``after_crash``: The cleanup step's work after a crash.
- ``bridge``: The host's end of the box's roads out.
- ``bwrap``: The agent's box.
- ``cleanup``: What must not outlive a run.
- ``egress``: The egress proxy.
- ``folders``: The run's folders and what the agent may reach of the host's.
- ``launch``: How a process of the agent is started.
- ``network``: How the agent's network is held for one run.
- ``place``: Where and as whom the agent runs, decided and made before anything is started.
- ``principal``: Who a process of the run runs as, and the paths every part of the box
  shares.
- ``tools_shell``: The shell Claude Code runs its tools in.
- ``users``: The run's own Linux user (MISSION T3, T5).
"""
