"""The ``tusk`` command: one subcommand per job.

Each subcommand lives in its own module, imported only when it runs so that
``tusk --help`` stays fast and one broken part cannot break the others. A
command module exposes ``add_arguments(parser)`` and ``run(args) -> int``.

This module owns what every command shares: ``--debug`` (tracebacks), the
environment variables each command reads (listed in its ``--help``), and the
``(default: ...)`` every option with a default shows.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import importlib.util
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from tusk.actions_edge import report_and_exit_code
from tusk.errors import UserError

# What each environment variable a command may read is for, and its default.
ENV_DOCS: dict[str, str] = {
    "TUSK_CONFIG": "path of tusk.yml when --config is not given (default: ./tusk.yml)",
    "TUSK_GITHUB_API_URL": "GitHub REST API root (default: https://api.github.com)",
    "TUSK_BOT_TOKEN": "the bot's classic token: notifications and context",
    "TUSK_DISPATCH_TOKEN": "the control repository owner's token: repository_dispatch",
    "TUSK_OWNER_TOKEN": "init --apply: the control repository owner's classic token (repo, "
    "workflow); used for the set-up only, never stored",
    "TUSK_AGENT_TOKEN": "the bot's token for writes",
    "TUSK_READ_TOKEN": "the bot's read-only token (reads, cloning, reading a log issue)",
    "TUSK_ATTEST_TRUST_ROOT": "the PEM file of the root a run's signed record must chain to",
    "ANTHROPIC_API_KEY": "the Anthropic API key, added by the model proxy outside the agent",
    "ANTHROPIC_AUTH_TOKEN": "a gateway's bearer token, sent by the model proxy instead of a key",
    "TUSK_MCP_BEARER": "this run's secret every MCP request must carry (run-claude makes one "
    "per run)",
    "ANTHROPIC_BASE_URL": "an Anthropic API gateway (default: the Anthropic API)",
    "CLAUDE_CODE_MAX_RETRIES": "model API retries when --max-retries is not given (default: 5)",
    "GITHUB_EVENT_PATH": "the triggering event (set by Actions) when no payload file is given",
    "GITHUB_REPOSITORY": "owner/name of the repository the workflow runs in (set by Actions)",
    "GITHUB_SERVER_URL": "with GITHUB_REPOSITORY and GITHUB_RUN_ID: the run's link (Actions)",
    "GITHUB_RUN_ID": "the workflow run (set by Actions)",
    "RUNNER_TEMP": "the runner's temporary folder (set by Actions; default: a new temp folder)",
    "GITHUB_TOKEN": "a token that can read the log issue, when TUSK_READ_TOKEN is not set",
    "TUSK_DEBUG": "1 prints tracebacks, like --debug (default: off)",
    "TUSK_POLL_STATE": "the poller's state file when --state is not given (default: none)",
}
ACTIONS_PLUMBING = """\
Under GitHub Actions (GITHUB_ACTIONS=true) errors are ::error:: annotations,
outputs go to GITHUB_OUTPUT and a summary to GITHUB_STEP_SUMMARY; elsewhere
errors are plain lines on stderr."""
SECRETS = ("TUSK_BOT_TOKEN", "TUSK_DISPATCH_TOKEN", "TUSK_AGENT_TOKEN", "TUSK_READ_TOKEN")


@dataclass(frozen=True)
class Command:
    name: str
    module: str
    help: str
    env: tuple[str, ...] = ()
    extra: str | None = None  # an optional dependency group the command needs


ACTION_RUN = ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")
COMMANDS: tuple[Command, ...] = (
    Command(
        "poll",
        "tusk.poller.cli",
        "poll the bot's notifications and dispatch triggers",
        (
            "TUSK_BOT_TOKEN",
            "TUSK_DISPATCH_TOKEN",
            "TUSK_GITHUB_API_URL",
            "TUSK_CONFIG",
            "TUSK_POLL_STATE",
        ),
    ),
    Command(
        "receive-shard",
        "tusk.steps.receive_shard.main",
        "store one dispatched shard",
        (
            "TUSK_AGENT_TOKEN",
            "TUSK_GITHUB_API_URL",
            "TUSK_CONFIG",
            "GITHUB_EVENT_PATH",
            "GITHUB_REPOSITORY",
        ),
    ),
    Command(
        "merge-shards",
        "tusk.steps.merge_shards.main",
        "join a job's shards into its context",
        (
            "TUSK_AGENT_TOKEN",
            "TUSK_GITHUB_API_URL",
            "TUSK_CONFIG",
            "GITHUB_EVENT_PATH",
            *ACTION_RUN,
        ),
    ),
    Command(
        "build-context",
        "tusk.steps.build_context.main",
        "render the context, open the log issue",
        ("TUSK_AGENT_TOKEN", "TUSK_GITHUB_API_URL", "TUSK_CONFIG", *ACTION_RUN),
    ),
    Command(
        "run-claude",
        "tusk.steps.run_claude.main",
        "run Claude Code isolated and write it up",
        (
            "TUSK_AGENT_TOKEN",
            "TUSK_READ_TOKEN",
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "ANTHROPIC_BASE_URL",
            "CLAUDE_CODE_MAX_RETRIES",
            "TUSK_GITHUB_API_URL",
            "TUSK_CONFIG",
            "RUNNER_TEMP",
        ),
    ),
    Command(
        "go-away",
        "tusk.steps.go_away.main",
        "block the bot and clean up after it",
        ("TUSK_AGENT_TOKEN", "TUSK_GITHUB_API_URL", "TUSK_CONFIG", "GITHUB_EVENT_PATH"),
    ),
    Command(
        "apply",
        "tusk.steps.apply.main",
        "apply (or discard) a staged set a person approved on GitHub",
        (
            "TUSK_AGENT_TOKEN",
            "TUSK_READ_TOKEN",
            "TUSK_GITHUB_API_URL",
            "TUSK_CONFIG",
            "GITHUB_EVENT_PATH",
            "RUNNER_TEMP",
        ),
    ),
    Command(
        "undo",
        "tusk.steps.undo.main",
        "take back one run's writes on a thread",
        ("TUSK_AGENT_TOKEN", "TUSK_GITHUB_API_URL", "TUSK_CONFIG", "GITHUB_EVENT_PATH"),
    ),
    Command(
        "stop",
        "tusk.steps.stop.main",
        "end the run in flight on a thread; its work stays, the bot stays allowed",
        ("TUSK_AGENT_TOKEN", "TUSK_GITHUB_API_URL", "TUSK_CONFIG", "GITHUB_EVENT_PATH"),
    ),
    Command(
        "mcp",
        "tusk.mcp.server.cli",
        "the policy-enforcing MCP server",
        (
            "TUSK_AGENT_TOKEN",
            "TUSK_READ_TOKEN",
            "TUSK_MCP_BEARER",
            "TUSK_GITHUB_API_URL",
            "TUSK_CONFIG",
        ),
    ),
    Command("shards", "tusk.cli.shards", "split or join shard payloads (debugging a dispatch)"),
    Command(
        "permissions", "tusk.poller.permissions_cli", "check a permission marker", ("TUSK_CONFIG",)
    ),
    Command(
        "audit",
        "tusk.cli.audit",
        "verify an audit log's hash chain, from a file or from a log issue",
        ("TUSK_GITHUB_API_URL", "TUSK_READ_TOKEN", "GITHUB_TOKEN", "TUSK_ATTEST_TRUST_ROOT"),
    ),
    Command(
        "usage",
        "tusk.cli.usage",
        "spend and runs per day, requester and repository, from the log issues",
        ("TUSK_READ_TOKEN", "TUSK_BOT_TOKEN", "TUSK_GITHUB_API_URL", "TUSK_CONFIG"),
    ),
    Command(
        "config", "tusk.cli.config", "check tusk.yml or print its JSON Schema", ("TUSK_CONFIG",)
    ),
    Command(
        "init",
        "tusk.cli.init",
        "write a ready control repository: workflows, tusk.yml, secrets list "
        "(--apply: make it on GitHub)",
        (
            "TUSK_OWNER_TOKEN",
            "TUSK_BOT_TOKEN",
            "TUSK_AGENT_TOKEN",
            "TUSK_READ_TOKEN",
            "ANTHROPIC_API_KEY",
            "TUSK_GITHUB_API_URL",
        ),
    ),
    Command(
        "doctor",
        "tusk.cli.doctor",
        "check a live deployment: tokens and scopes, repositories, users, labels, workflows",
        (*SECRETS, "TUSK_GITHUB_API_URL", "TUSK_CONFIG"),
    ),
    Command(
        "record",
        "tusk.cli.record",
        "record real GitHub exchanges the recorded-truth tests lack (a scratch repository)",
        ("TUSK_BOT_TOKEN", "TUSK_GITHUB_API_URL"),
        extra="sandbox",
    ),
    Command(
        "sandbox",
        "tusk.sandbox.cli",
        "local stand-ins: the GitHub and the scripted model",
        extra="sandbox",
    ),
    Command(
        "demo",
        "tusk.cli.demo",
        "run a mention end to end on the local stand-ins (--live: on GitHub)",
        (*SECRETS, "ANTHROPIC_API_KEY", "TUSK_GITHUB_API_URL", "TUSK_CONFIG"),
        extra="sandbox",
    ),
)
# Modules the extras bring; a command needing one says how to install it.
EXTRA_MODULES = {"sandbox": ("graphql", "openapi_schema_validator")}


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Every option with a default says it, unless its help already does."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if (
            action.default not in (None, False, argparse.SUPPRESS)
            and action.option_strings
            and "default" not in text
        ):
            text += " (default: %(default)s)"
        return text


def env_epilog(names: Sequence[str]) -> str:
    names = [*names, "TUSK_DEBUG"]
    width = max(len(name) for name in names)
    lines = ["environment:", *(f"  {name.ljust(width)}  {ENV_DOCS[name]}" for name in names)]
    return "\n".join([*lines, "", ACTIONS_PLUMBING])


def finish_parser(parser: argparse.ArgumentParser, epilog: str) -> None:
    """Give ``parser`` and every sub-action parser the shared formatter and epilog."""
    parser.formatter_class = HelpFormatter
    parser.epilog = epilog
    if not any("--debug" in action.option_strings for action in parser._actions):
        parser.add_argument("--debug", action="store_true", help="print the traceback of any error")
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                finish_parser(child, epilog)


class VersionAction(argparse.Action):
    """``--version``: the release, or a checkout's development version past it (git is
    asked only when the flag is given)."""

    def __call__(self, parser: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        from tusk.version import running_version

        print(f"tusk {running_version()}")
        parser.exit()


def build_parser(commands: Sequence[Command] = COMMANDS) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tusk",
        description="Tusk: an AI coding agent on GitHub, under policy, traced and reversible.",
        epilog="`tusk COMMAND --help` lists each command's options and environment "
        "variables.\n" + ACTIONS_PLUMBING,
        formatter_class=HelpFormatter,
    )
    parser.add_argument(
        "--version", action=VersionAction, nargs=0, help="print the version and exit"
    )
    parser.add_argument("--debug", action="store_true", help="print the traceback of any error")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in commands:
        sub.add_parser(command.name, help=command.help, description=command.help)
    return parser


def command_parser(command: Command) -> argparse.ArgumentParser:
    """The full parser of one command (imports its module)."""
    module = importlib.import_module(command.module)
    sub = argparse.ArgumentParser(prog=f"tusk {command.name}", description=command.help)
    module.add_arguments(sub)
    finish_parser(sub, env_epilog(command.env))
    return sub


def option_strings(parser: argparse.ArgumentParser) -> set[str]:
    """Every ``--option`` of a parser and of its subcommands."""
    found = {o for action in parser._actions for o in action.option_strings}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                found |= option_strings(child)
    return found


def unknown_option(parser: argparse.ArgumentParser, args: Sequence[str]) -> str | None:
    """The first ``--option`` no parser knows, with the closest one it may mean.

    argparse checks required options before unknown ones, so ``tusk poll --onse``
    would otherwise be told that --once or --loop is required.
    """
    known = option_strings(parser)
    for token in args:
        if token == "--":
            break
        name = token.split("=", 1)[0]
        if not name.startswith("--") or any(option.startswith(name) for option in known):
            continue  # argparse takes an unambiguous prefix too
        close = difflib.get_close_matches(name, sorted(known), n=1)
        return f"unrecognized option {name}" + (f" (did you mean {close[0]}?)" if close else "")
    return None


def missing_extra(command: Command) -> UserError | None:
    if command.extra is None:
        return None
    absent = [m for m in EXTRA_MODULES[command.extra] if importlib.util.find_spec(m) is None]
    if not absent:
        return None
    return UserError(
        f"`tusk {command.name}` needs the {command.extra} extra ({', '.join(absent)} missing)",
        f'Install it: pip install "tusk[{command.extra}]" (scripts/setup does, in a clone).',
    )


def main(argv: Sequence[str] | None = None) -> int:
    import os

    argv = list(sys.argv[1:] if argv is None else argv)
    debug = os.environ.get("TUSK_DEBUG") == "1"
    while argv[:1] == ["--debug"]:
        debug = True
        argv = argv[1:]
    parser = build_parser()
    by_name = {command.name: command for command in COMMANDS}
    if not argv or argv[0] not in by_name:
        parser.parse_args(argv or ["--help"])
        return 2
    command = by_name[argv[0]]
    try:
        problem = missing_extra(command)
        if problem is not None:
            raise problem
        sub = command_parser(command)
        unknown = unknown_option(sub, argv[1:])
        if unknown is not None:
            sub.error(unknown)
        args = sub.parse_args(argv[1:])
        debug = debug or bool(getattr(args, "debug", False))
        return int(sub_run(command, args))
    except Exception as error:
        return report_and_exit_code(error, debug=debug)


def sub_run(command: Command, args: argparse.Namespace) -> int:
    return int(importlib.import_module(command.module).run(args))


if __name__ == "__main__":
    raise SystemExit(main())
