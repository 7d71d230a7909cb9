"""The write-up on the log issue: the outcome, the summary, the transcript, the live
progress comment, and publishing it part by part.

- ``glance``: The run at a glance (pure).
- ``kept``: The run's write-up as run-claude keeps it.
- ``outcome``: How a Claude Code session ended, decided from its exit code, its result event
  and the supervisor's own stop reason (reference.
- ``progress``: The run's live status on its log issue.
- ``publish``: Publish the write-up on the log issue part by part, each retried safely
  (MISSION A8).
- ``signed``: The run's attestation in its write-up.
- ``summary``: Compose the run's write-up on its log issue (MISSION A8, A9).
- ``transcript``: Claude Code's stream-json events as view models for the transcript
  template, and the text hygiene every comment posted from a run gets.
"""
