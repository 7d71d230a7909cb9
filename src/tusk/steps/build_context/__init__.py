"""The build-context step: the poller's thread turned into the model's context and the log
issue.

- ``build_context``: build-context.
- ``items``: build-context's items.
- ``log_body``: The log issue body (A4), fitted under GitHub's 65,536-character limit.
- ``main``: ``tusk build-context``.
- ``sections``: build-context's sections.
- ``selection``: A3.
- ``sizes``: build-context's sizes.
- ``views``: The typed models the context, task and summary templates are fed.
"""
