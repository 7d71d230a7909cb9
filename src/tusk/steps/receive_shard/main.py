"""``tusk receive-shard``: the CLI edge of the receive-shard action.

Without ``--check``: validate the dispatched shard; a one-shard job is written
as the context file (``complete=true``), any other shard is written to a file
for the upload step (``upload=true``). With ``--check`` (after the upload):
list the job's artifacts and output ``complete``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import ClassVar

from pydantic import Field

from tusk import actions_edge
from tusk.contracts.config import load_secrets
from tusk.contracts.inputs import AGENT_TOKEN, API_URL, StepInputs, config_input, or_runner
from tusk.errors import InputError, first_line
from tusk.github.gateway import GitHubError, gateway_from_secrets
from tusk.shards import codec as shards
from tusk.shards.failures import record_shard_failure
from tusk.shards.transport import read_event, shard_from_event
from tusk.steps.receive_shard import receive_shard


class Inputs(StepInputs):
    """The inputs of actions/receive-shard."""

    read_elsewhere: ClassVar[dict[str, str]] = {**AGENT_TOKEN, **API_URL}

    payload_file: str = or_runner(
        "payload_file",
        "GITHUB_EVENT_PATH",
        description="file holding the client_payload (or the whole event); empty: the event",
    )
    context_file: str = Field(
        "tusk-context.json", description="where a one-shard job's context document is written"
    )
    config: str = config_input()
    repository: str = or_runner(
        "repository", "GITHUB_REPOSITORY", description="owner/name whose artifacts hold the shards"
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    Inputs.add_arguments(parser)
    parser.add_argument(
        "--work-dir", default=".tusk-shards", help="where a shard is written for upload"
    )
    parser.add_argument(
        "--check", action="store_true", help="after the upload: is every shard of the job stored?"
    )


def run(args: argparse.Namespace) -> int:
    inputs = Inputs.from_args(args)
    if not inputs.payload_file:
        raise InputError(
            "no shard payload to read",
            "Give --payload-file FILE, or run inside a repository_dispatch workflow.",
        )
    try:
        shard = shard_from_event(read_event(Path(inputs.payload_file)))
        received = (
            None  # --check: only whether the job's shards are all stored
            if args.check
            else receive_shard.receive(
                shard, work_dir=Path(args.work_dir), context_file=Path(inputs.context_file)
            )
        )
    except shards.ShardError as error:
        # A shard that cannot be read would leave its job waiting forever: record it.
        record_shard_failure(None, inputs.config, error)
        raise
    common: dict[str, str | int] = {
        "jobid": shard.jobid,
        "shard-index": shard.shard_index,
        "total-shards": shard.total_shards,
    }
    if received is None:
        try:
            return _check(inputs, shard.jobid, shard.total_shards, shard.shard_index, common)
        except GitHubError as error:
            # Unlisted artifacts leave the job waiting with nobody to merge it: record it.
            problem = f"listing its stored shards failed: {first_line(error)}"
            record_shard_failure(None, inputs.config, shards.ShardError(shard.jobid, problem))
            raise
    print(
        f"job {shard.jobid}: received shard {shard.shard_index + 1} of {shard.total_shards}",
        flush=True,
    )
    actions_edge.set_outputs(
        {
            **common,
            "complete": received.complete,
            "upload": received.artifact_file is not None,
            "context-file": received.context_file or "",
            "artifact-name": received.artifact_name or "",
            "artifact-path": received.artifact_file or "",
        }
    )
    return 0


def _check(inputs: Inputs, jobid: str, total: int, own: int, common: dict[str, str | int]) -> int:
    if total == 1:
        actions_edge.set_outputs({**common, "complete": True, "missing": "", "watchdog": False})
        return 0
    repo = inputs.repository
    if not repo:
        raise InputError("no repository to list artifacts in", "Give --repository OWNER/NAME.")
    gateway = gateway_from_secrets(load_secrets(), "agent")
    gap = receive_shard.first_missing_index(gateway, repo, jobid, total, own_index=own)
    complete = gap is None
    print(
        f"job {jobid}: "
        + ("every shard is stored" if complete else f"still waiting (shard {gap} not stored yet)"),
        flush=True,
    )
    # The job's first and last shards also run merge-shards when incomplete: their
    # bounded wait turns a shard lost on the way into a recorded failure instead of
    # silence. Two watchdogs, because the lost shard may be one of them; the poller
    # sends shards in index order, so the first one normally waits for the rest.
    watchdog = own in (0, total - 1)
    actions_edge.set_outputs(
        {
            **common,
            "complete": complete,
            "missing": "" if gap is None else gap,
            "watchdog": watchdog,
        }
    )
    return 0
