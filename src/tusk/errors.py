"""One exception hierarchy for everything Tusk reports to people.

``UserError`` is a problem the user can fix (bad config, bad input, a refused
call): it carries what was wrong and what to do, and reaches the user as an
``::error::`` annotation plus the step summary under Actions, as an ``error:``
line elsewhere. A ``TuskError`` raised on purpose (GitHub refused a request,
GitHub could not be reached) is one line too. Anything else is a bug and keeps
its traceback. ``--debug`` adds the traceback to every kind. All exit non-zero.
"""

from __future__ import annotations

import sys
import traceback


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


def report_and_exit_code(error: BaseException, *, debug: bool = False) -> int:
    """Tell the user about ``error`` the right way and return the exit code."""
    # Imported here: the Actions edge imports this module for UserError.
    from tusk import actions_edge

    if debug:
        traceback.print_exception(error, file=sys.stderr)
    if isinstance(error, UserError):
        try:
            actions_edge.append_summary(f"### ❌ {error.title}\n\n{error.hint}\n")
        except UserError as unusable:  # the summary file itself: say so, then the error
            print(f"error: {unusable.title}", file=sys.stderr)
        if actions_edge.in_actions():
            actions_edge.error(error.title, detail=error.hint)
        else:
            print(f"error: {error.title}", file=sys.stderr)
            if error.hint:
                print(error.hint, file=sys.stderr)
        return 1
    if isinstance(error, TuskError) or is_network_failure(error):
        # Raised on purpose (e.g. a GitHubError) or the network: the message says what
        # to do, and a traceback would bury it (``--debug`` shows it).
        message = " ".join(str(error).split()) or type(error).__name__
        # The message says what happened; the class name would only open it in code words.
        actions_edge.error("Tusk stopped", detail=message)
        if not debug and not actions_edge.in_actions():
            print("(run again with --debug for the traceback)", file=sys.stderr)
        return 1
    if not debug:
        traceback.print_exception(error, file=sys.stderr)
    actions_edge.error(f"Tusk failed unexpectedly: {type(error).__name__}: {error}")
    return 1
