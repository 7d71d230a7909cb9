"""Contracts and configuration: the strict, versioned models passed between steps (the raw
context the poller fetched among them), ``tusk.yml`` and its secrets, each step's inputs, the
price table, the current pass, and their exported JSON Schemas.

- ``base``: The base of every contract.
- ``commands``: The command jobs.
- ``config``: Settings.
- ``config_text``: Reading ``tusk.yml`` safely, and saying what is wrong with it in plain
  words.
- ``inputs``: A step's inputs.
- ``limits``: Limits across runs.
- ``models``: Contracts between Tusk's steps.
- ``old_names``: tusk.yml's renamed keys, still read under their old names for one release.
- ``passes``: Which tools the current pass may use, as the supervisor says
  (``RUN_DIR/pass.json``).
- ``pricing``: What the model costs.
- ``ranges``: The range of every numeric command-line option, checked where argparse reads
  it.
- ``raw_context``: ``ContextDocument.raw``.
- ``run_limits``: The run's own limits (MISSION C4).
- ``schemas``: JSON Schemas of the contracts and of ``tusk.yml``, exported for users.
"""
