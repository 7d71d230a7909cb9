"""``@bot stop``: the run in flight on a thread ended by its requester or a writer (C2).

- ``main``: ``tusk stop``.
"""
