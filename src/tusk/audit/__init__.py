"""The audit log: the hash chain of every call, and its copy posted on and verified
from a log issue."""
