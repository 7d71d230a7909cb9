"""``tusk mcp apply --set FILE --run-dir DIR``: the apply engine as the apply step runs it.

Tokens come only from the environment (``TUSK_AGENT_TOKEN``, ``TUSK_READ_TOKEN``),
as for ``tusk mcp serve``. The report (``apply-report.json``: each write, made
or refused and why) is written into the run folder; the exit status is 0 when
every write was made, 1 otherwise.
"""

from __future__ import annotations

import argparse
import logging

from tusk.approval.apply_report import write_report
from tusk.approval.staged_set import StagedSet
from tusk.contracts.config import load_secrets, load_settings, resolve_config_path
from tusk.errors import InputError
from tusk.github.gateway import gateway_from_secrets
from tusk.mcp.apply import engine as apply
from tusk.mcp.server import wiring as mcp_server


def run_apply(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.WARNING, format="tusk mcp apply: %(levelname)s %(message)s")
    settings = load_settings(resolve_config_path(args.config))
    secrets = load_secrets()
    tokens = secrets.require("agent_token", "read_token")
    if not args.set.is_file():
        raise InputError(f"{args.set}: no such staged set", "The apply step writes it first.")
    staged = StagedSet.model_validate_json(args.set.read_text(encoding="utf-8"))
    read_gateway = gateway_from_secrets(secrets, "read")
    args.run_dir.mkdir(parents=True, exist_ok=True)
    applier = apply.build_applier(
        settings,
        staged,
        read_gateway=read_gateway,
        write_gateway=gateway_from_secrets(secrets, "agent"),
        run_dir=args.run_dir,
        read_token=tokens["read_token"],
        write_token=tokens["agent_token"],
        watch=mcp_server.blocklist_watch(settings, read_gateway),
    )
    report = apply.apply_set(applier)
    write_report(args.run_dir, report)
    for step in report.steps:
        print(f"{'made' if step.ok else 'NOT made'}: {step.target}: {step.said}")
    return 0 if report.ok else 1
