"""No concurrency group may cancel a pending go-away or agent delivery.

GitHub keeps "at most one running and one pending job in a concurrency group";
a newly queued one cancels the pending one (docs.github.com/en/actions/using-
jobs/using-concurrency). act ignores `concurrency:`, so these tests play GitHub's
rule on the groups the reusable workflows really declare.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
# Expressions that name the delivery's job id in each workflow.
JOB_ID = {"needs.receive.outputs.jobid", "github.event.client_payload.jobid"}


def groups(workflow: str) -> dict[str, str]:
    """Each job's concurrency group expression."""
    jobs = yaml.safe_load((WORKFLOWS / workflow).read_text(encoding="utf-8"))["jobs"]
    found = {}
    for name, job in jobs.items():
        concurrency = job.get("concurrency")
        if concurrency is None:
            continue
        if isinstance(concurrency, dict):
            assert concurrency.get("cancel-in-progress") in (None, False), name
            concurrency = concurrency["group"]
        found[name] = str(concurrency)
    return found


def resolve(group: str, jobid: str) -> str:
    """The group of one delivery: job-id expressions resolved, anything else refused."""

    def value(match: re.Match[str]) -> str:
        expression = match.group(1).strip()
        if expression not in JOB_ID:
            raise AssertionError(f"cannot tell what {expression!r} is for a delivery")
        return jobid

    return re.sub(r"\$\{\{(.*?)\}\}", value, group)


def played(deliveries: list[str], group: str | None) -> set[str]:
    """Job ids of the deliveries that ran, when each queues while the first still runs."""
    if group is None:
        return set(deliveries)
    running: dict[str, str] = {}
    pending: dict[str, str] = {}
    ran = set()
    for jobid in deliveries:
        key = resolve(group, jobid)
        if key not in running:
            running[key] = jobid
            ran.add(jobid)
        else:
            pending[key] = jobid  # replaces (cancels) the pending one
    ran.update(pending.values())  # each pending one runs when its group's run ends
    return ran


DELIVERIES = [
    ["job-a", "job-b", "job-c"],  # three go-aways (or jobs) in a row
    ["job-a", "job-a", "job-b", "job-a", "job-c", "job-b"],  # shards and re-deliveries
]


@pytest.mark.parametrize(
    ("workflow", "job"), [("tusk-go-away.yml", "go-away"), ("tusk-agent.yml", "agent")]
)
@pytest.mark.parametrize("deliveries", DELIVERIES)
def test_no_delivery_of_a_job_is_lost_to_a_concurrency_group(
    workflow: str, job: str, deliveries: list[str]
) -> None:
    group = groups(workflow).get(job)
    assert played(deliveries, group) == set(deliveries)


def test_one_shared_group_would_lose_a_go_away() -> None:
    """The rule as played here does catch a shared group (what the go-away had)."""
    assert played(["job-a", "job-b", "job-c"], "tusk-go-away") == {"job-a", "job-c"}


def test_the_poll_group_cancels_only_polls_which_do_the_same_work() -> None:
    poll: dict[str, Any] = groups("tusk-poll.yml")
    assert poll == {"poll": "tusk-poll"}
