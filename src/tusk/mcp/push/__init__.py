"""The push of a branch (the ``push_branch`` tool): the agent's work into its fork.

- ``tool``: the tool's prepare (import the agent's bundle, or the one an approved set
  kept, and check it) and send (push), an ordinary write.
- ``git_push``: the git work, the token only in git's environment.
- ``bundle``: a bundle's header, checked; ``checks``: paths, secrets in commits, files,
  names (pure).
- ``approval``: the push in approval mode: checked as a push, kept as a bundle; at apply,
  the kept bundle imported as a push's.
"""
