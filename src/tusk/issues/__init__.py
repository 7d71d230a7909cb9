"""The issue-backed state: log issues and their claim, the claim's lease, the history, memory and
blocklist issues, and the run facts a log issue shows."""
