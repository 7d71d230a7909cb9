"""receive-shard + merge-shards run offline under act, against the local GitHub."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path

import pytest
from shard_helpers import context_doc, noisy, shards_of

from tusk.sandbox.act_runner import ControlRepo
from tusk.shards import codec as shards

pytestmark = pytest.mark.act

WORKFLOW = Path(__file__).parent / "workflows" / "shards.yml"
CONTROL = "alice/tusk-control"
SCENARIO = {
    "users": [{"login": "tusk-bot"}, {"login": "alice"}],
    "tokens": {"agent": {"user": "tusk-bot", "scopes": ["repo"]}},
    "repos": [
        {"name": CONTROL, "collaborators": {"tusk-bot": "write"}, "labels": ["workflow", "bug"]}
    ],
}


@pytest.fixture
def control(local_github, tmp_path):
    local_github.load(SCENARIO)
    # workflows/shards.yml calls the two actions as tusk-platform/tusk/actions/...@v1.
    repo = ControlRepo(tmp_path / "control", repo=CONTROL, tusk_ref="tusk-platform/tusk@v1")
    shutil.copyfile(WORKFLOW, repo.root / ".github" / "workflows" / WORKFLOW.name)
    (repo.root / "tusk.yml").write_text(
        f"bot: tusk-bot\ncontrol_repo: {CONTROL}\nallowed_users: [alice]\n"
    )
    return repo


def dispatch(control: ControlRepo, github, shard, run_id: int):
    event = {"action": "tusk-shard", "client_payload": shards.shard_payload(shard)}
    return control.run(
        "repository_dispatch",
        event,
        workflow=WORKFLOW.name,
        api_url=github.url,
        secrets={"TUSK_AGENT_TOKEN": "agent", "GITHUB_TOKEN": "agent"},
        env={"GITHUB_RUN_ID": str(run_id)},
        timeout=300,
    )


def merged_context(github, jobid: str) -> bytes:
    gateway = github.gateway("agent")
    listed = gateway.get(f"/repos/{CONTROL}/actions/artifacts", params={"name": f"{jobid}-context"})
    (artifact,) = listed["artifacts"]
    blob = gateway.download(f"/repos/{CONTROL}/actions/artifacts/{artifact['id']}/zip")
    with zipfile.ZipFile(io.BytesIO(blob)) as archive:
        (name,) = archive.namelist()
        return archive.read(name)


def test_a_sharded_job_is_received_and_merged_under_act(control, local_github):
    doc = context_doc(raw=noisy("act", 3000))
    job = shards_of(doc, max_bytes=1024)
    assert len(job) >= 3
    # Out of order: the middle shards, then shard 0, then the last one. act plays one
    # delivery at a time, so shard 0 (a watchdog with no wait here) finds the last
    # shard missing and records that; the last shard then completes the job.
    order = [*job[1:-1], job[0], job[-1]]
    for run, shard in enumerate(order, 1):
        result = dispatch(control, local_github, shard, run)
        if shard is job[0]:
            assert result.returncode == 1
        else:
            assert result.ok, result.stdout[-3000:] + result.stderr[-2000:]
    assert merged_context(local_github, "job-0001") == doc
    stored = local_github.gateway("agent").get(
        f"/repos/{CONTROL}/actions/artifacts", params={"name": "job-0001-shard-0"}
    )
    assert stored["total_count"] == 1


def test_a_one_shard_job_needs_no_artifact_under_act(control, local_github):
    doc = context_doc(jobid="job-single")
    (shard,) = shards_of(doc, jobid="job-single", max_bytes=60000)
    result = dispatch(control, local_github, shard, 1)
    assert result.ok, result.stdout[-3000:] + result.stderr[-2000:]
    assert merged_context(local_github, "job-single") == doc
    listed = local_github.gateway("agent").get(f"/repos/{CONTROL}/actions/artifacts")
    assert [a["name"] for a in listed["artifacts"]] == ["job-single-context"]


def test_a_lost_shard_fails_the_watchdog_run_and_is_recorded_under_act(control, local_github):
    job = shards_of(context_doc(raw=noisy("lost", 3000)), max_bytes=1024)
    first = dispatch(control, local_github, job[0], 1)  # the first watchdog gives up
    last = dispatch(control, local_github, job[-1], 2)  # so does the last one
    assert (first.returncode, last.returncode) == (1, 1)
    gateway = local_github.gateway("agent")
    issues = gateway.get(f"/repos/{CONTROL}/issues", params={"labels": "bug", "state": "all"})
    (issue,) = issues  # both reports go to one failure record
    assert (
        f"shards {shards.format_indices(range(1, len(job)))} of {len(job)} are missing"
        in (issue["body"])
    )
    (again,) = gateway.get(f"/repos/{CONTROL}/issues/{issue['number']}/comments")
    missing = shards.format_indices(range(1, len(job) - 1))
    assert f"shards {missing} of {len(job)} are missing" in again["body"]
    assert "job-0001" in json.dumps(issue)
