"""The apply action: ``@bot apply <digest>`` / ``@bot discard``, verified from GitHub, and an
approved staged set applied exactly once (``tusk apply``)."""
