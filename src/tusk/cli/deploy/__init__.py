"""The deployment: ``tusk init --apply`` made through GitHub's API.

- ``command``: the command's edge: tokens read once, the plan printed, then
  ``tusk doctor``'s checks.
- ``plan``: pure: the steps between the deployment wanted and what GitHub has.
- ``look``: what GitHub has of it, read with the owner's token.
- ``perform``: each step performed through the gateway.
"""
