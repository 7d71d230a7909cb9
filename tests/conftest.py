"""Shared fixtures. The local GitHub and scripted model fixtures come from the
sandbox's own pytest plugins, so the demo, act runs and tests share one stand-in."""

pytest_plugins = ["tusk.sandbox.testing", "tusk.sandbox.model_testing"]
