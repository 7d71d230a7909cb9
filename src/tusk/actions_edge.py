"""The GitHub Actions edge: outputs, step summary, annotations, masking.

Every action writes through these helpers so escaping is done once. Workflow
commands (``::error::``, ``::group::``, ``::add-mask::``) are printed only
under Actions (``GITHUB_ACTIONS=true``); on a laptop (``tusk <step>``) errors
and warnings are plain ``error: ...`` / ``warning: ...`` lines on stderr,
outputs go to stderr and the summary is dropped, so the same code runs in both
places and nothing is said twice.
"""

from __future__ import annotations

import os
import sys
import traceback
import uuid
from collections.abc import Mapping
from pathlib import Path

from tusk.errors import TuskError, UserError, is_network_failure


def in_actions() -> bool:
    return os.environ.get("GITHUB_ACTIONS") == "true"


def escape_data(value: str) -> str:
    """Escape a workflow-command message (the part after ``::``)."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """Escape a workflow-command property value (``title=...``)."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def _command(name: str, message: str, properties: Mapping[str, str] | None = None) -> str:
    props = ""
    if properties:
        props = " " + ",".join(f"{k}={escape_property(v)}" for k, v in properties.items())
    return f"::{name}{props}::{escape_data(message)}"


def run_url() -> str | None:
    """This workflow run's page, from the runner's environment (None outside Actions)."""
    server, repo, run_id = (
        os.environ.get(k) for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")
    )
    return f"{server}/{repo}/actions/runs/{run_id}" if server and repo and run_id else None


def _plain(level: str, title: str, detail: str) -> None:
    """Outside Actions: one readable line (plus the detail's own lines) on stderr."""
    text = f"{title}: {detail}" if detail else title
    print(f"{level}: {text}", file=sys.stderr, flush=True)


def error(title: str, *, detail: str = "") -> None:
    """An ``::error::`` annotation with ``title``; ``detail`` becomes the message.
    Outside Actions: ``error: title: detail`` on stderr."""
    if not in_actions():
        _plain("error", title, detail)
        return
    print(_command("error", detail or title, {"title": title} if detail else None), flush=True)


def warning(title: str, *, detail: str = "") -> None:
    if not in_actions():
        _plain("warning", title, detail)
        return
    print(_command("warning", detail or title, {"title": title} if detail else None), flush=True)


def notice(message: str) -> None:
    if not in_actions():
        print(message, file=sys.stderr, flush=True)
        return
    print(_command("notice", message), flush=True)


def mask(secret: str) -> None:
    """Ask the runner to hide ``secret`` in every later log line (only under Actions:
    elsewhere the command would only print the secret)."""
    if not in_actions():
        return
    for line in secret.splitlines() or [secret]:
        if line.strip():
            print(f"::add-mask::{escape_data(line)}", flush=True)


def set_outputs(outputs: Mapping[str, str | int | bool | Path]) -> None:
    """Write step outputs to ``$GITHUB_OUTPUT`` (heredoc form, safe for newlines)."""
    target = os.environ.get("GITHUB_OUTPUT")
    lines = []
    for name, raw in outputs.items():
        value = str(raw).lower() if isinstance(raw, bool) else str(raw)
        delimiter = f"tusk_{uuid.uuid4().hex}"
        lines.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    if target:
        _append("GITHUB_OUTPUT", target, "".join(lines))
    else:
        for name, raw in outputs.items():
            print(f"output {name}={raw}", file=sys.stderr)


def append_summary(markdown: str) -> None:
    """Append to the step summary when running in Actions."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if target:
        _append(
            "GITHUB_STEP_SUMMARY", target, markdown if markdown.endswith("\n") else markdown + "\n"
        )


def _append(variable: str, target: str, text: str) -> None:
    """Append ``text`` to the runner's file named by ``variable``; a file that cannot be
    written is a clear error naming the variable, not a bare ``FileNotFoundError``."""
    try:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as error:
        raise UserError(
            f"{variable} names {target!r}, which cannot be written: {error.strerror or error}",
            f"The runner sets {variable} to a writable file; outside Actions unset it "
            "(outputs then go to stderr) or point it at a file in an existing folder.",
        ) from None


def group(title: str) -> None:
    """Fold the following log lines under ``title`` (Actions); a heading elsewhere."""
    if not in_actions():
        print(f"== {title}", file=sys.stderr, flush=True)
        return
    print(f"::group::{escape_data(title)}", flush=True)


def end_group() -> None:
    if in_actions():
        print("::endgroup::", flush=True)


def report_and_exit_code(failure: BaseException, *, debug: bool = False) -> int:
    """Tell the user about ``failure`` the right way and return the exit code."""
    if debug:
        traceback.print_exception(failure, file=sys.stderr)
    if isinstance(failure, UserError):
        try:
            append_summary(f"### ❌ {failure.title}\n\n{failure.hint}\n")
        except UserError as unusable:  # the summary file itself: say so, then the error
            print(f"error: {unusable.title}", file=sys.stderr)
        if in_actions():
            error(failure.title, detail=failure.hint)
        else:
            print(f"error: {failure.title}", file=sys.stderr)
            if failure.hint:
                print(failure.hint, file=sys.stderr)
        return 1
    if isinstance(failure, TuskError) or is_network_failure(failure):
        # Raised on purpose (e.g. a GitHubError) or the network: the message says what
        # to do, and a traceback would bury it (``--debug`` shows it).
        message = " ".join(str(failure).split()) or type(failure).__name__
        # The message says what happened; the class name would only open it in code words.
        error("Tusk stopped", detail=message)
        if not debug and not in_actions():
            print("(run again with --debug for the traceback)", file=sys.stderr)
        return 1
    if not debug:
        traceback.print_exception(failure, file=sys.stderr)
    error(f"Tusk failed unexpectedly: {type(failure).__name__}: {failure}")
    return 1
