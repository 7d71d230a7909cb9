"""Each run's audit record signed keylessly with the workflow's identity, and verified."""
