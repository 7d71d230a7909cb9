"""The poller: notifications, then triggers, authorization, context and dispatch.

- ``activity``: A cheap look at threads the bot read before.
- ``authorization``: Who may trigger work, and how much the repository trusts them (MISSION
  P3).
- ``carry``: Follow-ups a run could no longer take become the thread's next task (MISSION
  C1).
- ``cli``: ``tusk poll``.
- ``context``: Fetch the whole raw context of a thread (MISSION P6), in as few requests as
  GitHub allows.
- ``core``: The poller's decisions, free of I/O (ENGINEERING.
- ``cycle``: One poll cycle at the edge.
- ``dispatch``: Send work to the control repository (MISSION P7, P8, P5).
- ``graphql_pages``: Fetch a GraphQL document and every page of every connection in it, to
  the end.
- ``jobids``: Deterministic job ids.
- ``limit_gate``: The poller's check of the limits across runs, before a task is dispatched.
- ``notifications``: The bot's notifications.
- ``permissions``: The permission marker (MISSION P4).
- ``permissions_cli``: ``tusk permissions parse TEXT``.
- ``raw_shape``: The fetched GraphQL data in the shape of GitHub's REST API.
- ``state_file``: The poller's conditional state, kept between runs in a small JSON file.
"""
