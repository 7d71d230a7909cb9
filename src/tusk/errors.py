"""One exception hierarchy for everything Tusk reports to people.

``UserError`` is a problem the user can fix (bad config, bad input, a refused
call): it carries what was wrong and what to do, and reaches the user as an
``::error::`` annotation plus the step summary under Actions, as an ``error:``
line elsewhere. A ``TuskError`` raised on purpose (GitHub refused a request,
GitHub could not be reached) is one line too. Anything else is a bug and keeps
its traceback. ``--debug`` adds the traceback to every kind. All exit non-zero.
"""

from __future__ import annotations


class TuskError(Exception):
    """Base of every error Tusk raises on purpose."""


class UserError(TuskError):
    """Something the user can fix: says what was wrong and what to do."""

    def __init__(self, title: str, hint: str = "") -> None:
        self.title = title
        self.hint = hint
        super().__init__(f"{title}\n{hint}" if hint else title)


class ConfigError(UserError):
    """Invalid settings: every problem at once, each with its key path."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        listing = "\n".join(f"  - {problem}" for problem in problems)
        # A file that is not YAML, or not there, has no keys to fix yet.
        whole_file = any(problem.startswith(("(YAML)", "(file)", "file ")) for problem in problems)
        advice = (
            "Fix the file as said above, then run again."
            if whole_file
            else "Fix each key above; `tusk config schema` prints what every key expects."
        )
        super().__init__(
            f"{source}: {len(problems)} problem(s) in the configuration", f"{listing}\n{advice}"
        )


class InputError(UserError):
    """A step or command was given input it cannot use."""


def first_line(error: BaseException) -> str:
    """The first line of ``error``'s message, or its type's name when it has none."""
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def is_network_failure(error: BaseException) -> bool:
    """GitHub (or another endpoint) could not be reached: not a bug, one line is enough."""
    import requests

    return isinstance(error, (requests.ConnectionError, requests.Timeout, ConnectionError))
