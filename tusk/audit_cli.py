"""``tusk audit verify FILE``: check an audit log's hash chain."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tusk.audit import head_hash, read_records, verify_chain
from tusk.errors import InputError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    verify = sub.add_parser("verify", help="exit non-zero at the first broken link of the chain")
    verify.add_argument("file", type=Path, help="an audit.jsonl written by the MCP server")


def run(args: argparse.Namespace) -> int:
    path: Path = args.file
    if not path.is_file():
        raise InputError(f"{path}: no such audit log", "Pass the audit.jsonl of a run directory.")
    broken = verify_chain(path)
    if broken is not None:
        print(f"{path}: chain broken at line {broken.line}: {broken.reason}", file=sys.stderr)
        return 1
    records = read_records(path)
    print(f"{path}: {len(records)} record(s), chain intact, head {head_hash(records)}")
    return 0
