"""The agent's box: the run's own user and folders, how its processes start, the
network it gets, and everything a run leaves taken down again."""
