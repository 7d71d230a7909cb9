"""REST handlers: a workflow's runs (``actions/list-workflow-runs``), newest first.

Runs are seeded by the scenario (``repos[].workflow_runs``: the workflow file, when
it was created, its event, status and conclusion); ``tusk doctor`` reads the newest
run of the poll workflow to tell a schedule GitHub dropped or disabled.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tusk.sandbox.rest import Call, Reply, handles, paginate
from tusk.sandbox.shapes_repos import node_id
from tusk.sandbox.world_clock import iso
from tusk.sandbox.world_records import Repo


@dataclass
class WorkflowRun:
    id: int
    workflow: str  # the file name under .github/workflows, e.g. poll.yml
    created_at: datetime
    event: str = "schedule"
    status: str = "completed"
    conclusion: str | None = "success"


def run_shape(call: Call, repo: Repo, run: WorkflowRun, number: int) -> dict[str, Any]:
    """The ``workflow-run`` schema's required fields (GitHub's OpenAPI description)."""
    api = f"{call.shapes.repo_url(repo)}/actions/runs/{run.id}"
    sha = call.shapes.sha(repo, repo.default_branch)
    minimal = call.shapes.repo(repo, call.login, full=False)
    person = {"name": repo.owner, "email": f"{repo.owner}@users.noreply.github.com"}
    return {
        "id": run.id,
        "node_id": node_id("WorkflowRun", run.id),
        "name": run.workflow,
        "head_branch": repo.default_branch,
        "run_number": number,
        "display_title": run.workflow,
        "event": run.event,
        "status": run.status,
        "conclusion": run.conclusion,
        "head_sha": sha,
        "path": f".github/workflows/{run.workflow}",
        "workflow_id": abs(hash(run.workflow)) % 10**8,
        "url": api,
        "html_url": f"{call.shapes.base}/{repo.full_name}/actions/runs/{run.id}",
        "created_at": iso(run.created_at),
        "updated_at": iso(run.created_at),
        "head_commit": {
            "id": sha,
            "tree_id": sha,
            "message": "scheduled",
            "timestamp": iso(run.created_at),
            "author": person,
            "committer": person,
        },
        "head_repository": minimal,
        "repository": minimal,
        "jobs_url": f"{api}/jobs",
        "logs_url": f"{api}/logs",
        "check_suite_url": f"{api}/check-suite",
        "cancel_url": f"{api}/cancel",
        "rerun_url": f"{api}/rerun",
        "artifacts_url": f"{api}/artifacts",
        "workflow_url": f"{call.shapes.repo_url(repo)}/actions/workflows/{run.workflow}",
        "pull_requests": [],
    }


@handles("actions/list-workflow-runs")
def list_workflow_runs(call: Call) -> Reply:
    repo = call.repo()
    workflow = str(call.params["workflow_id"])
    runs = sorted(
        (r for r in repo.workflow_runs if r.workflow == workflow or str(r.id) == workflow),
        key=lambda r: (r.created_at, r.id),
    )
    numbered = list(reversed(list(enumerate(runs, start=1))))  # GitHub: newest first
    chunk, headers = paginate(call, numbered)
    return Reply(
        200,
        {
            "total_count": len(runs),
            "workflow_runs": [run_shape(call, repo, run, n) for n, run in chunk],
        },
        headers,
    )
