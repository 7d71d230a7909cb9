"""Claude Code's sessions: the command line, one session watched live, the main
session and its continues, cancellation, and the MCP server process.

- ``cancel``: SIGTERM and SIGINT as a cancellation of the run, not a traceback.
- ``command``: Claude Code's command line, and the lines Tusk adds to the saved event
  stream.
- ``continues``: The self-checks after the main session (MISSION A7), each a ``--resume``.
- ``followups``: The run's side of follow-ups (MISSION C1).
- ``mcp_process``: The run's MCP server process, and the config that points Claude Code at
  it (MISSION A5).
- ``passes``: The main session and its continues (MISSION A6, A7), each a pass of Claude
  Code appended to one event stream, with the live status on the progress comment kept up
  meanwhile.
- ``run``: One Claude Code session, watched live (MISSION A6).
- ``stop_watch``: ``@bot stop`` as the run sees it (MISSION C2).
- ``watch``: Live watch of Claude Code's stream-json output (MISSION A6).
"""
