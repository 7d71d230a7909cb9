"""The audit log: the hash chain of every call, and its copy posted on and verified
from a log issue.

- ``chain``: The MCP server's audit log.
- ``on_issue``: The audit log kept on its log issue, and verified from there alone.
"""
