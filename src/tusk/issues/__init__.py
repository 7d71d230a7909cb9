"""The issue-backed state: log issues and their claim, the claim's lease, the history, memory and
blocklist issues, and the run facts a log issue shows.

- ``blocklist_codec``: The pure codec of the blocklist issue.
- ``blocklist_snapshot``: A blocklist issue read back.
- ``claims``: A job's claims, read only as GitHub documents them (ENGINEERING §2, MISSION
  A4).
- ``followups``: Follow-ups.
- ``go_away_records``: What each go-away leaves in its own log issue, and the blocklist
  rebuilt from it.
- ``lease``: A claim's lease.
- ``log_issue``: Log issues.
- ``ran_before``: A job whose claim is gone, known by what outlives its log issue
  (ENGINEERING §2).
- ``run_facts``: The facts of one run that people see on its log issue and in its summary.
- ``stale_runs``: Runs that died (MISSION C8).
- ``state``: State issues.
- ``state_codec``: The pure codec of the state issues.
- ``stop_record``: A stop, recorded on the log issue of the run it ends (MISSION C2).
- ``thread_runs``: A thread's runs, read from the log issues.
- ``usage``: The runs of the last hours, read from their log issues (limits across runs,
  usage).
"""
