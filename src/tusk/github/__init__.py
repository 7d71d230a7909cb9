"""The GitHub edge: the gateway (the only code that speaks GitHub's APIs) with its errors, retry
waits and request ledger, pacing, one backoff for what GitHub does eventually, creates made once
by nonce, the bot's forks, reactions and trust levels.

- ``backoff``: Waiting on GitHub.
- ``errors``: The GitHub edge's errors.
- ``forks``: The bot's fork of a repository, found by its parent whatever its name.
- ``gateway``: The GitHub gateway.
- ``ledger``: The request ledger.
- ``limit_reply``: The bot's answer on a thread whose mention is over a limit across runs.
- ``once``: Creates that happen once although GitHub's answer got lost (ENGINEERING §2).
- ``pacing``: Keep one token's content-creating requests under GitHub's content-creation
  limit.
- ``reactions``: Reactions on the trigger.
- ``retries``: When GitHub asks for patience, and for how long.
- ``rights``: Confirmed rights.
- ``sealing``: A secret's value sealed for GitHub's Actions secrets API (pure).
- ``thread_status``: The run's status on the thread that started it
  (``feedback.thread_status``).
- ``trust``: How much a repository trusts an author, and which source said so (MISSION P3,
  G1).
"""
