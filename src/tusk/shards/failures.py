"""A job whose shards cannot be merged, recorded in the control repository.

Shared by receive-shard (a shard that cannot be read) and merge-shards (a job
that cannot be joined): either way the job would wait forever in silence, so
the failure becomes a log issue labelled workflow + bug (``tusk.issues.log_issue``)
that says what was lost and how to trigger the job again.
"""

from __future__ import annotations

import sys

from tusk import actions_edge
from tusk.contracts.config import Settings, load_secrets, load_settings, resolve_config_path
from tusk.github.gateway import Gateway, gateway_from_secrets
from tusk.issues.log_issue import record_failure
from tusk.shards import codec as shards

# GitHub refuses an issue title over 256 characters ("title is too long (maximum is 256
# characters)"); a job id is at most 81, so this only guards against a change elsewhere.
TITLE_LIMIT = 256


def failure_report(jobid: str, error: shards.ShardError, *, run_url: str | None) -> tuple[str, str]:
    """Title and body of the failure log issue."""
    title = f"[Agent Log] shards of job {jobid} could not be merged"[:TITLE_LIMIT]
    lines = [
        "# Shard transport failed",
        "",
        f"Job `{jobid}` was **not run**: {error.problem}.",
        "",
        "| fault | shard indices |",
        "|---|---|",
        f"| missing | {_cell(error.missing)} |",
        f"| conflicting | {_cell(error.conflicting)} |",
        f"| corrupt | {_cell(error.corrupt)} |",
        "",
        "## What was lost",
        "",
        "The context this job carried never reached an agent run. No comment, issue "
        "or pull request was made for it.",
        "",
        "## How to trigger it again",
        "",
        "Mention the bot again on the original issue, pull request or discussion; "
        "the poller dispatches the job anew. To inspect a set of shard payloads, "
        "save them as JSON lines and run `tusk shards join FILE`.",
    ]
    if run_url:
        lines += ["", f"Workflow run: {run_url}"]
    return title, "\n".join(lines) + "\n"


def _cell(indices: tuple[int, ...]) -> str:
    return shards.format_indices(indices) if indices else "—"


def record_failure_issue(
    gateway: Gateway, settings: Settings, error: shards.ShardError, *, run_url: str | None
) -> str:
    """Open the failure log issue (workflow + bug) in the control repository; its URL."""
    jobid = error.jobid or "unknown"
    title, body = failure_report(jobid, error, run_url=run_url)
    return record_failure(
        gateway, settings, jobid=jobid, repo=settings.control_repo, title=title, body=body
    )


def record_shard_failure(
    gateway: Gateway | None, config: str | None, error: shards.ShardError
) -> None:
    """The steps' edge: record ``error`` with the settings in ``config`` (read only now,
    as the steps need them for nothing else); failing to record is reported too."""
    try:
        if gateway is None:
            gateway = gateway_from_secrets(load_secrets(), "agent")
        settings = load_settings(resolve_config_path(config))
        url = record_failure_issue(gateway, settings, error, run_url=actions_edge.run_url())
    except Exception as problem:
        actions_edge.error(
            "could not record the shard failure in the control repository",
            detail=f"{type(problem).__name__}: {problem}",
        )
        return
    print(f"job {error.jobid}: failure recorded at {url}", file=sys.stderr, flush=True)
    actions_edge.append_summary(f"Failure recorded: {url}\n")
