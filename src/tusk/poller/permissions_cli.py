"""``tusk permissions parse TEXT``: the effective permissions of a mention, as JSON.

For users checking a marker before they post it. The defaults come from
``tusk.yml`` (``--config``) when one is found, else from the built-in limits.
"""

from __future__ import annotations

import argparse
import json
import sys

from tusk.contracts.config import Agent, Limits, load_settings, resolve_config_path
from tusk.contracts.models import ALL_WRITE_OPERATIONS, PermissionConfig
from tusk.poller.permissions import effective_permissions


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    parse = sub.add_parser("parse", help="print the effective permissions of a mention")
    parse.add_argument("text", help='the comment text, e.g. "@bot [permissions: no-pr] fix it"')
    parse.add_argument("--config", help="tusk.yml whose limits are the defaults")


def defaults_for(config: str | None) -> PermissionConfig:
    path = resolve_config_path(config)
    if config or path.is_file():
        return load_settings(path).default_permissions()
    limits = Limits()
    return PermissionConfig(
        operations=ALL_WRITE_OPERATIONS,
        comments_per_thread=limits.comments_per_thread,
        issues_per_repo=limits.issues_per_repo,
        prs_per_repo=limits.prs_per_repo,
        memory_writes=limits.memory_writes_per_run,
        budget_usd=Agent.model_fields["max_budget_usd"].default,
        max_turns=limits.max_turns,
        run_minutes=limits.run_minutes,
    )


def run(args: argparse.Namespace) -> int:
    effective = effective_permissions(defaults_for(args.config), args.text)
    print(json.dumps(effective.model_dump(mode="json"), indent=2))
    if effective.error:  # in words too: the JSON above is what applies, fail-closed
        print(
            f"error: the permission marker {effective.marker or ''} cannot be read: "
            f"{effective.error}\nA run would get the most restrictive permissions (above); "
            "fix the marker before posting it.",
            file=sys.stderr,
        )
        return 2
    return 0
