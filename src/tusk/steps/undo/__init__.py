"""``@bot undo``: what a run wrote, taken back after the request and the rights are checked.

- ``main``: ``tusk undo``.
- ``on_log_issue``: What undo did, kept where the run is kept.
- ``plan``: undo's decisions, free of I/O.
- ``take_back``: undo's writes.
- ``verify``: undo's verification.
"""
