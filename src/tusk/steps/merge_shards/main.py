"""``tusk merge-shards``: the CLI edge of the merge-shards action.

Reads which job to merge from the dispatched shard (or ``--jobid``/``--total``),
downloads the job's shards, and writes the context file. When the job cannot
be merged, the failure is recorded as a log issue in the control repository
(labelled workflow + bug) before the step fails.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from tusk import actions_edge
from tusk.contracts.config import load_secrets
from tusk.contracts.models import MAX_TOTAL_SHARDS, Shard
from tusk.contracts.ranges import float_in, int_in
from tusk.errors import InputError, first_line
from tusk.github.gateway import GitHubError, gateway_from_secrets
from tusk.shards import codec as shards
from tusk.shards.failures import record_shard_failure
from tusk.shards.transport import read_event, shard_from_event, write_context
from tusk.steps.merge_shards import merge_shards

# A job on GitHub's runners stops after 6 hours: waiting longer could never end well.
MAX_WAIT_SECONDS = 6 * 3600.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--payload",
        help="file holding a shard of the job (or the whole event); default: $GITHUB_EVENT_PATH",
    )
    parser.add_argument("--jobid", help="the job to merge (instead of reading a shard)")
    parser.add_argument(
        "--total",
        type=int_in(1, MAX_TOTAL_SHARDS),
        help=f"its number of shards (with --jobid; 1-{MAX_TOTAL_SHARDS})",
    )
    parser.add_argument(
        "--repository", help="owner/name holding the artifacts; default: $GITHUB_REPOSITORY"
    )
    parser.add_argument("--context-file", default="context.json", help="where the context goes")
    parser.add_argument(
        "--timeout",
        type=float_in(0.0, MAX_WAIT_SECONDS),
        default=merge_shards.WaitPolicy.timeout,
        help=f"seconds to wait for shards still uploading (0-{MAX_WAIT_SECONDS:.0f})",
    )
    parser.add_argument("--config", help="tusk.yml (for the control repository and labels)")


def run(args: argparse.Namespace) -> int:
    jobid, total, own = _job_of(args)
    context_file = Path(args.context_file)
    gateway = gateway_from_secrets(load_secrets(), "agent")
    try:
        if total == 1 and own is not None:
            # The whole context came in the dispatch itself: nothing to download.
            write_context(jobid, [own], context_file)
        else:
            merge_shards.merge(
                gateway,
                _repository(args),
                jobid,
                total,
                context_file,
                checksum=own.checksum if own is not None else None,
                policy=merge_shards.WaitPolicy(timeout=args.timeout),
            )
    except shards.ShardError as error:
        record_shard_failure(gateway, args.config, error)
        raise
    except GitHubError as error:
        # GitHub refusing the listing or download loses the job just the same: record it.
        problem = f"reading its shards failed: {first_line(error)}"
        record_shard_failure(gateway, args.config, shards.ShardError(jobid, problem))
        raise
    print(f"job {jobid}: context written to {context_file}", flush=True)
    actions_edge.set_outputs({"context-file": context_file, "jobid": jobid, "total-shards": total})
    return 0


def _repository(args: argparse.Namespace) -> str:
    repo: str | None = args.repository or os.environ.get("GITHUB_REPOSITORY")
    if not repo:
        raise InputError("no repository to read artifacts from", "Give --repository OWNER/NAME.")
    return repo


def _job_of(args: argparse.Namespace) -> tuple[str, int, Shard | None]:
    if args.jobid:
        if args.total is None or args.total < 1:
            raise InputError("--jobid needs --total N (N >= 1)", "Say how many shards the job has.")
        return args.jobid, args.total, None
    source = args.payload or os.environ.get("GITHUB_EVENT_PATH")
    if not source:
        raise InputError(
            "no job to merge",
            "Give --jobid and --total, or --payload FILE, or run on a repository_dispatch.",
        )
    shard = shard_from_event(read_event(Path(source)))
    return shard.jobid, shard.total_shards, shard
