"""``tusk mcp serve``: start the policy-enforcing MCP server for one run (``tusk mcp apply``:
apply an approved staged set under the same policy, ``apply_cli``).

Prints its URL (``http://127.0.0.1:PORT/mcp``) as the first line of stdout,
then serves until killed. Tokens come only from its own environment
(``TUSK_AGENT_TOKEN`` for writes, ``TUSK_READ_TOKEN`` for reads, the API base
from ``TUSK_GITHUB_API_URL``), never from arguments or files; so does the
run's bearer secret (``TUSK_MCP_BEARER``) every request must carry.
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
import sys
from pathlib import Path

from pydantic import ValidationError

from tusk import actions_edge
from tusk.contracts.config import load_secrets, load_settings, resolve_config_path
from tusk.contracts.models import ContextDocument, RunMetadata
from tusk.contracts.ranges import int_in
from tusk.errors import InputError
from tusk.git.agent import AgentGit, BrokerClient, BundleSource
from tusk.github.gateway import gateway_from_secrets


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    applying = sub.add_parser(
        "apply", help="apply an approved staged set once, under the run's policy (the apply step)"
    )
    applying.add_argument("--set", type=Path, required=True, help="the staged set (JSON)")
    applying.add_argument(
        "--run-dir", type=Path, required=True, help="audit.jsonl to continue; the report goes here"
    )
    applying.add_argument("--config", help="tusk.yml (default: $TUSK_CONFIG, else ./tusk.yml)")
    serve = sub.add_parser("serve", help="serve the tools over streamable HTTP on 127.0.0.1")
    serve.add_argument(
        "--port",
        type=int_in(0, 65535),
        default=0,
        help="port on 127.0.0.1 (0: any free one)",
    )
    serve.add_argument(
        "--run-dir", type=Path, required=True, help="audit.jsonl and loop file go here"
    )
    serve.add_argument(
        "--context", type=Path, required=True, help="the run's context document (JSON)"
    )
    source = serve.add_mutually_exclusive_group()
    source.add_argument(
        "--workspace",
        type=Path,
        help="the agent's git checkout, for push_branch: bundles are made there by git run as "
        "its owner (this process must be that user or root)",
    )
    source.add_argument(
        "--bundle-fd",
        type=int_in(0, 65535),
        help="a socket to a bundle broker that makes the agent's bundles (run-claude passes it)",
    )
    serve.add_argument("--config", help="tusk.yml (default: $TUSK_CONFIG, else ./tusk.yml)")
    serve.add_argument(
        "--log-issue-url", help="the run's log issue, when RUN_DIR/run.json does not name it"
    )
    serve.add_argument(
        "--pass-file",
        type=Path,
        help="the supervisor's pass.json: tools outside the current pass are refused "
        "(FORBIDDEN_OPERATION), every tool when the file is missing or unreadable",
    )


def log_issue_url(run_dir: Path, explicit: str | None) -> str:
    meta = run_dir / "run.json"
    if meta.is_file():
        return RunMetadata.model_validate_json(meta.read_text(encoding="utf-8")).log_issue_url
    if explicit:
        return explicit
    raise InputError(
        f"no log issue for this run: {meta} is missing",
        "Run build-context first (it writes run.json), or pass --log-issue-url.",
    )


def bundle_source(args: argparse.Namespace) -> BundleSource | None:
    """Where push_branch gets the agent's commits: never by opening the workspace itself."""
    if args.bundle_fd is not None:
        return BrokerClient(socket.socket(fileno=args.bundle_fd))
    if args.workspace is not None:
        try:
            return AgentGit.as_owner(args.workspace)
        except OSError as error:
            raise InputError(
                f"--workspace {args.workspace}: {error}", "Pass the agent's checkout."
            ) from None
    return None


def run(args: argparse.Namespace) -> int:
    if args.action == "apply":
        from tusk.mcp.apply.cli import run_apply

        return run_apply(args)
    return serve(args)


def serve(args: argparse.Namespace) -> int:
    from tusk.issues.state import StateStore
    from tusk.mcp.server import transport
    from tusk.mcp.server import wiring as mcp_server

    # Refused requests and crashed tools are logged to stderr, which run-claude keeps.
    logging.basicConfig(level=logging.WARNING, format="tusk mcp: %(levelname)s %(message)s")
    settings = load_settings(resolve_config_path(args.config))
    secrets = load_secrets()
    tokens = secrets.require("agent_token", "read_token")
    bearer = os.environ.get("TUSK_MCP_BEARER", "")
    if len(bearer) < 16:
        raise InputError(
            "TUSK_MCP_BEARER is not set (or shorter than 16 characters)",
            "Every request must carry this run's bearer secret, or any local process could "
            "use the run's tokens. run-claude sets it; by hand: export TUSK_MCP_BEARER=$(openssl "
            "rand -hex 32) and give Claude Code the same value in its MCP config's headers.",
        )
    if len(bearer) >= 8 and actions_edge.in_actions():
        actions_edge.mask(bearer)
    if not args.context.is_file():
        raise InputError(
            f"{args.context}: no such context document", "Pass the merged context JSON."
        )
    context = read_context(args.context)
    run_dir: Path = args.run_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    url = log_issue_url(run_dir, args.log_issue_url)

    read_gateway = gateway_from_secrets(secrets, "read")
    write_gateway = gateway_from_secrets(secrets, "agent")
    watch = mcp_server.blocklist_watch(settings, read_gateway)
    blocklist = watch.start()  # M7; checked again before writes
    writer = StateStore(write_gateway, settings)

    def append_entry(kind: str, text: str) -> str:
        return writer.append_entry(kind, text, jobid=context.jobid)  # type: ignore[arg-type]

    config = mcp_server.policy_config(settings, context, log_issue_url=url, blocklist=blocklist)
    runtime = mcp_server.build_runtime(
        settings=settings,
        config=config,
        scope=mcp_server.read_scope(settings, context),
        read_gateway=read_gateway,
        write_gateway=write_gateway,
        run_dir=run_dir,
        secrets=(tokens["agent_token"], tokens["read_token"]),
        append_entry=append_entry,
        pass_file=args.pass_file,
        blocklist_watch=watch,
    )
    pusher = mcp_server.build_pusher(
        runtime,
        source=bundle_source(args),
        read_token=tokens["read_token"],
        write_token=tokens["agent_token"],
    )
    server = mcp_server.build_server(runtime, pusher=pusher)
    sock = transport.bind(args.port)
    print(transport.url_of(sock), flush=True)
    print(
        f"tusk mcp: serving {len(runtime.config.permissions.operations)} write operation kind(s) "
        f"for {context.repo}; audit log {run_dir / 'audit.jsonl'}",
        file=sys.stderr,
    )
    transport.serve(server, sock, bearer=bearer)
    return 0


def read_context(path: Path) -> ContextDocument:
    """The context document at ``path``, or every reason it is not one."""
    try:
        return ContextDocument.model_validate_json(path.read_bytes())
    except ValidationError as error:
        problems = [
            f"  - {'.'.join(str(part) for part in e['loc']) or 'the file'}: {e['msg']}"
            for e in error.errors()[:8]
        ]
        more = len(error.errors()) - len(problems)
        raise InputError(
            f"{path}: not a Tusk context document ({error.error_count()} problem(s))",
            "\n".join(problems + ([f"  - and {more} more"] if more > 0 else []))
            + "\nPass the merged context JSON (merge-shards' context-file output).",
        ) from None
