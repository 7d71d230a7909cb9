"""git as Tusk runs it: a token for one git command through git's environment, and git in the
agent's workspace only ever as the agent.

- ``agent``: git in the agent's workspace, only ever as the agent.
- ``env``: Settings for one git command, passed through git's own environment.
"""
