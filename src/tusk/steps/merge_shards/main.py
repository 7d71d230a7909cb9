"""``tusk merge-shards``: the CLI edge of the merge-shards action.

Reads which job to merge from the dispatched shard (or ``--jobid``/``--total-shards``),
downloads the job's shards, and writes the context file. When the job cannot
be merged, the failure is recorded as a log issue in the control repository
(labelled workflow + bug) before the step fails.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import ClassVar

from pydantic import Field

from tusk import actions_edge
from tusk.contracts.config import load_secrets
from tusk.contracts.inputs import AGENT_TOKEN, API_URL, StepInputs, config_input, or_runner
from tusk.contracts.models import MAX_TOTAL_SHARDS, Shard
from tusk.errors import InputError, first_line
from tusk.github.gateway import GitHubError, gateway_from_secrets
from tusk.shards import codec as shards
from tusk.shards.failures import record_shard_failure
from tusk.shards.transport import read_event, shard_from_event, write_context
from tusk.steps.merge_shards import merge_shards

# A job on GitHub's runners stops after 6 hours: waiting longer could never end well.
MAX_WAIT_SECONDS = 6 * 3600.0


class Inputs(StepInputs):
    """The inputs of actions/merge-shards."""

    read_elsewhere: ClassVar[dict[str, str]] = {**AGENT_TOKEN, **API_URL}

    payload_file: str = or_runner(
        "payload_file",
        "GITHUB_EVENT_PATH",
        description="file holding a shard of the job (or the whole event); empty: the event",
    )
    jobid: str = Field("", description="the job to merge instead of the event's")
    total_shards: int | None = Field(
        None, ge=1, le=MAX_TOTAL_SHARDS, description="its number of shards (with jobid)"
    )
    context_file: str = Field("tusk-context.json", description="where the context document goes")
    timeout_seconds: float = Field(
        merge_shards.WaitPolicy.timeout,
        ge=0,
        le=MAX_WAIT_SECONDS,
        allow_inf_nan=False,
        description="seconds to wait for shards uploading",
    )
    config: str = config_input()
    repository: str = or_runner(
        "repository", "GITHUB_REPOSITORY", description="owner/name whose artifacts hold the shards"
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    Inputs.add_arguments(parser)


def run(args: argparse.Namespace) -> int:
    inputs = Inputs.from_args(args)
    jobid, total, own = _job_of(inputs)
    context_file = Path(inputs.context_file)
    gateway = gateway_from_secrets(load_secrets(), "agent")
    try:
        if total == 1 and own is not None:
            # The whole context came in the dispatch itself: nothing to download.
            write_context(jobid, [own], context_file)
        else:
            merge_shards.merge(
                gateway,
                _repository(inputs),
                jobid,
                total,
                context_file,
                checksum=own.checksum if own is not None else None,
                policy=merge_shards.WaitPolicy(timeout=inputs.timeout_seconds),
            )
    except shards.ShardError as error:
        record_shard_failure(gateway, inputs.config, error)
        raise
    except GitHubError as error:
        # GitHub refusing the listing or download loses the job just the same: record it.
        problem = f"reading its shards failed: {first_line(error)}"
        record_shard_failure(gateway, inputs.config, shards.ShardError(jobid, problem))
        raise
    print(f"job {jobid}: context written to {context_file}", flush=True)
    actions_edge.set_outputs({"context-file": context_file, "jobid": jobid, "total-shards": total})
    return 0


def _repository(inputs: Inputs) -> str:
    if not inputs.repository:
        raise InputError("no repository to read artifacts from", "Give --repository OWNER/NAME.")
    return inputs.repository


def _job_of(inputs: Inputs) -> tuple[str, int, Shard | None]:
    if inputs.jobid:
        if inputs.total_shards is None:
            raise InputError(
                "jobid needs total-shards N (N >= 1)", "Say how many shards the job has."
            )
        return inputs.jobid, inputs.total_shards, None
    if not inputs.payload_file:
        raise InputError(
            "no job to merge",
            "Give --jobid and --total-shards, or --payload-file FILE, or run on a "
            "repository_dispatch.",
        )
    shard = shard_from_event(read_event(Path(inputs.payload_file)))
    return shard.jobid, shard.total_shards, shard
