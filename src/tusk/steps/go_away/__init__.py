"""``@bot go away``: the request verified, the blocklist changed, the bot's own traces cleaned.

- ``cleanup``: go-away's cleanup.
- ``main``: ``tusk go-away``.
- ``plan``: go-away's plan.
- ``verify``: go-away's verification.
"""
