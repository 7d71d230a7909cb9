"""The ``tusk`` command: one subcommand per job.

Each subcommand lives in its own module, imported only when it runs so that
``tusk --help`` stays fast and one broken part cannot break the others. A
command module exposes ``add_arguments(parser)`` and ``run(args) -> int``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from tusk import __version__
from tusk.errors import report_and_exit_code


@dataclass(frozen=True)
class Command:
    name: str
    module: str
    help: str


COMMANDS: tuple[Command, ...] = (
    Command("poll", "tusk.poller.cli", "poll the bot's notifications and dispatch triggers"),
    Command("receive-shard", "tusk.actions.receive_shard.main", "store one dispatched shard"),
    Command(
        "merge-shards", "tusk.actions.merge_shards.main", "join a job's shards into its context"
    ),
    Command(
        "build-context", "tusk.actions.build_context.main", "render the context, open the log issue"
    ),
    Command(
        "run-claude", "tusk.actions.run_claude.main", "run Claude Code isolated and write it up"
    ),
    Command("go-away", "tusk.actions.go_away.main", "block the bot and clean up after it"),
    Command("mcp", "tusk.mcp_server.cli", "the policy-enforcing MCP server"),
    Command("shards", "tusk.shards_cli", "split or join shard payloads (debugging a dispatch)"),
    Command("permissions", "tusk.poller.permissions_cli", "check a permission marker"),
    Command("audit", "tusk.audit_cli", "verify an audit log's hash chain"),
    Command("config", "tusk.config_cli", "check tusk.yml or print its JSON Schema"),
    Command("sandbox", "tusk.sandbox.cli", "local stand-ins: the GitHub and the scripted model"),
    Command("demo", "tusk.demo", "run a mention end to end on the local stand-ins"),
)


def build_parser(commands: Sequence[Command] = COMMANDS) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tusk",
        description="Tusk: an AI coding agent on GitHub, under policy, traced and reversible.",
    )
    parser.add_argument("--version", action="version", version=f"tusk {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in commands:
        sub.add_parser(command.name, help=command.help, description=command.help)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    by_name = {command.name: command for command in COMMANDS}
    if not argv or argv[0] not in by_name:
        parser.parse_args(argv or ["--help"])
        return 2
    command = by_name[argv[0]]
    module = importlib.import_module(command.module)
    sub = argparse.ArgumentParser(prog=f"tusk {command.name}", description=command.help)
    module.add_arguments(sub)
    args = sub.parse_args(argv[1:])
    try:
        return int(module.run(args))
    except Exception as error:
        return report_and_exit_code(error)


if __name__ == "__main__":
    raise SystemExit(main())
