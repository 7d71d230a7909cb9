"""The model proxy: the only holder of the model credentials during a run, its guard,
its metering and the budget."""
