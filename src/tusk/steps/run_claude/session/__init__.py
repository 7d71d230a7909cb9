"""Claude Code's sessions: the command line, one session watched live, the main
session and its continues, cancellation, and the MCP server process."""
