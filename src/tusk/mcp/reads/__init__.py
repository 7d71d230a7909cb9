"""The agent's reads.

- ``reader``: one plain function per read tool.
- ``shapes``: what a read returns, neutralised.
- ``scope``: which repositories reads serve, pure.
"""
