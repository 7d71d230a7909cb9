"""``tusk config check [FILE]`` and ``tusk config schema``."""

from __future__ import annotations

import argparse
import json

from tusk.contracts.config import load_settings, resolve_config_path, settings_schema


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    check = sub.add_parser("check", help="validate a tusk.yml and report every problem")
    check.add_argument("file", nargs="?", help="path (default: --config, TUSK_CONFIG, ./tusk.yml)")
    check.add_argument("--config", dest="config", help="same as FILE")
    sub.add_parser("schema", help="print the JSON Schema of tusk.yml")


def run(args: argparse.Namespace) -> int:
    if args.action == "schema":
        print(json.dumps(settings_schema(), indent=2))
        return 0
    path = resolve_config_path(args.file or args.config)
    settings = load_settings(path)
    record_only = "on" if settings.record_only else "off"
    print(
        f"{path}: ok (bot {settings.bot}, control repository {settings.control_repo}, "
        f"{len(settings.allowed_users)} allowed user(s), record_only={record_only})"
    )
    return 0
