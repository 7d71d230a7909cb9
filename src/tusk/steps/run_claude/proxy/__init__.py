"""The model proxy: the only holder of the model credentials during a run, its guard,
its metering and the budget.

- ``budget``: The run's model proxy as run-claude sets it up.
- ``conversation``: A run's conversation on its thread, kept from the model proxy's record
  (MISSION C3).
- ``exchanges``: The run's own record of what the model was told and answered, kept by the
  model proxy.
- ``guard``: What the model proxy lets the model API reach for the agent.
- ``metering``: Token and cost metering of one run's model traffic, and its budget.
- ``prior``: Earlier turns put in front of the run's own conversation by the model proxy
  (C3).
- ``proxy``: The model proxy.
"""
