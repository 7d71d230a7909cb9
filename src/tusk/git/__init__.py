"""git as Tusk runs it: a token for one git command through git's environment, and git in the
agent's workspace only ever as the agent."""
