"""End-to-end harness: the real Claude Code, the scripted model, the real MCP
server over HTTP, the local GitHub, and an agent user this harness creates.

CI runs as root, so these tests run there; elsewhere without root they skip
and say why.
"""

from __future__ import annotations

import json
import os
import pwd
import secrets
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import SecretStr

from tests.root import require_root as _require_root
from tusk.contracts.config import Secrets, load_settings
from tusk.contracts.models import ContextDocument, PermissionConfig, RunMetadata, Trigger
from tusk.contracts.raw_context import RawContext, Thread
from tusk.issues.state import StateStore
from tusk.poller.permissions import effective_permissions
from tusk.steps.build_context.build_context import render_task, task_view
from tusk.steps.run_claude import inputs as run_inputs
from tusk.steps.run_claude import job
from tusk.steps.run_claude.box import principal as box_principal
from tusk.steps.run_claude.box import users as box_users
from tusk.steps.run_claude.runner_env import RunnerEnv
from tusk.text.markers import first_marker, job_marker, render_marker

REPO_ROOT = Path(__file__).resolve().parents[3]
CLAUDE = REPO_ROOT / "node_modules" / ".bin" / "claude"
# One pair of users per test session: two sessions on one machine (a developer's
# run beside another) must not end each other's agent processes.
AGENT_USER = f"tusk-e2e-agent-{os.getpid()}"
RUNNER_USER = f"tusk-e2e-runner-{os.getpid()}"  # plays the runner user that called sudo
# Distinctive token strings (the sandbox's token string is its name), so a probe
# that finds one cannot be a coincidence.
# Made up per run, so no file on disk (this one included) holds them: the agent's
# own probes grep the whole filesystem for them.
# pytest imports this file twice (as a conftest and from the tests), so the values
# are kept in this process's environment, which the agent user cannot read.
AGENT_TOKEN = os.environ.setdefault("TUSK_E2E_AGENT_TOKEN", f"agent-e2e-{secrets.token_hex(8)}")
READ_TOKEN = os.environ.setdefault("TUSK_E2E_READ_TOKEN", f"read-e2e-{secrets.token_hex(8)}")
API_KEY = os.environ.setdefault("TUSK_E2E_API_KEY", f"sk-test-e2e-{secrets.token_hex(8)}")
JOBID = "job-e2e-widgets-1"


def require_root() -> None:
    _require_root("the end-to-end tests (they create the agent user)")


@pytest.fixture(scope="session")
def agent_user() -> Iterator[str]:
    require_root()
    if not CLAUDE.exists():
        pytest.fail(f"Claude Code is missing at {CLAUDE}: run `npm ci`")
    try:
        pwd.getpwnam(AGENT_USER)
        created = False
    except KeyError:
        created = True
    box_users.ensure_user(AGENT_USER)
    yield AGENT_USER
    if created:
        subprocess.run(["userdel", "--remove", AGENT_USER], capture_output=True, check=False)


@pytest.fixture(scope="session")
def runner_user() -> Iterator[box_principal.Principal]:
    require_root()
    try:
        pwd.getpwnam(RUNNER_USER)
        created = False
    except KeyError:
        created = True
    user = box_users.ensure_user(RUNNER_USER)
    yield user
    if created:
        subprocess.run(["userdel", "--remove", RUNNER_USER], capture_output=True, check=False)


def scenario(*, log_issue_number: int = 1) -> dict[str, Any]:
    return {
        "users": [{"login": "alice"}, {"login": "tusk-bot"}],
        "tokens": {
            AGENT_TOKEN: {"user": "tusk-bot", "scopes": ["repo", "delete_repo", "workflow"]},
            READ_TOKEN: {"user": "tusk-bot", "scopes": ["repo"], "read_only": True},
            "alice": {"user": "alice", "scopes": ["repo"]},
        },
        "repos": [
            {
                "name": "alice/widgets",
                "default_branch": "main",
                "collaborators": {"tusk-bot": "write"},
                "branches": [{"name": "main"}],
                "files": {"README.md": "# Widgets\n\nA smal library.\n"},
                "issues": [
                    {
                        "number": 1,
                        "author": "alice",
                        "title": "Typo in README",
                        "body": 'The README says "smal".',
                        "comments": [{"author": "alice", "body": "@tusk-bot please fix it"}],
                    }
                ],
            },
            {
                "name": "alice/tusk-control",
                "private": True,
                "collaborators": {"tusk-bot": "write"},
                "labels": ["workflow", "bug"],
                "files": {"README.md": "# control\n"},
                "issues": [
                    {
                        "number": log_issue_number,
                        "author": "tusk-bot",
                        "title": "[Agent Log] alice/widgets #1 — 2026-01-01 00:00",
                        "body": "# Task\n\n> fix it\n\n" + job_marker(JOBID),
                        "labels": ["workflow"],
                    }
                ],
            },
        ],
    }


@dataclass
class E2E:
    """One prepared run: files build-context would have written, and the inputs."""

    tmp: Path
    github: Any
    model: Any
    agent_user: str
    config: dict[str, Any] = field(default_factory=dict)
    runner_temp: Path | None = None
    environ: dict[str, str] = field(default_factory=dict)
    # The mention; its permission marker narrows the configured permissions as the
    # poller's would, and task.md is then rendered as build-context renders it.
    mention: str | None = None
    # A later run on the same thread has its own job and log issue (``later_run``).
    jobid: str = JOBID
    log_issue_number: int = 1

    def run(self, script: dict[str, Any], **overrides: Any) -> run_inputs.JobResult:
        model_url = self.model.start(script)
        inputs = self.inputs(model_url, **overrides)
        return job.run_job(inputs)

    def inputs(self, model_url: str, **overrides: Any) -> run_inputs.JobInputs:
        out = self.tmp / "build"
        out.mkdir(exist_ok=True)
        now = datetime(2026, 1, 1, tzinfo=UTC)
        config = {
            "bot": "tusk-bot",
            "control_repo": "alice/tusk-control",
            "allowed_users": ["alice"],
            "agent": {"linux_user": self.agent_user},
            **self.config,
        }
        config_path = self.tmp / "tusk.yml"
        config_path.write_text(yaml.safe_dump(config))
        permissions = PermissionConfig()
        if self.mention is not None:
            defaults = load_settings(config_path).default_permissions()
            permissions = effective_permissions(defaults, self.mention)
        context = ContextDocument(
            jobid=self.jobid,
            repo="alice/widgets",
            actor="alice",
            trust_level="owner",
            permission_config=permissions,
            trigger=Trigger(
                type="issue_comment",
                id=str(self.log_issue_number),
                url=f"{self.github.url}/alice/widgets/issues/1#issuecomment-{self.log_issue_number}",
                number=1,
                author="alice",
                body=self.mention or "@tusk-bot please fix it",
                created_at=now,
            ),
            raw=RawContext(kind="issue", thread=Thread()),
            timestamp=now,
        )
        (out / "context.json").write_text(context.model_dump_json())
        task = "> @tusk-bot please fix it\n"
        if self.mention is not None:
            task = render_task(task_view(context, "issue", 1, has_diff=False))
        (out / "task.md").write_text(task)
        (out / "context.md").write_text("Issue #1: Typo in README. The README says smal.\n")
        run = RunMetadata(
            jobid=self.jobid,
            repo="alice/widgets",
            trigger_url=context.trigger.url,
            trigger_type="issue_comment",
            thread_number=1,
            log_issue_number=self.log_issue_number,
            log_issue_url=f"{self.github.url}/alice/tusk-control/issues/{self.log_issue_number}",
            control_repo="alice/tusk-control",
            task_path="task.md",
            context_path="context.md",
            context_file="context.json",
        )
        (out / "run.json").write_text(run.model_dump_json())
        environ = {"RUNNER_TEMP": str(self.runner_temp)} if self.runner_temp else {}
        environ.update(self.environ)
        values: dict[str, Any] = {
            "run": run,
            "run_json": out / "run.json",
            "settings": load_settings(config_path),
            "config_path": config_path,
            "secrets": Secrets(
                agent_token=SecretStr(AGENT_TOKEN),
                read_token=SecretStr(READ_TOKEN),
                anthropic_api_key=SecretStr(API_KEY),
                github_api_url=self.github.url,
            ),
            "anthropic_base_url": model_url,
            "claude": CLAUDE,
            "run_dir": self.tmp / "run",
            "max_retries": 0,
            "runner": RunnerEnv.from_environ(environ),
        }
        values.update(overrides)
        return run_inputs.JobInputs(**values)

    # -- reading the outcome back

    def log_issue(self) -> dict[str, Any]:
        number = self.log_issue_number
        return self.github.gateway(AGENT_TOKEN).get(f"/repos/alice/tusk-control/issues/{number}")

    def log_comments(self) -> list[str]:
        """The write-up comments on the log issue, each without its hidden part marker."""
        return [body for key, body in self.log_parts() if key is not None]

    def log_parts(self) -> list[tuple[str | None, str]]:
        """Every comment on the log issue as (write-up part or None, body without marker)."""
        gateway = self.github.gateway(AGENT_TOKEN)
        out: list[tuple[str | None, str]] = []
        path = f"/repos/alice/tusk-control/issues/{self.log_issue_number}/comments"
        for comment in gateway.paginate(path):
            marker = first_marker(comment["body"], "writeup")
            body = comment["body"]
            if marker is not None and body.startswith("<!-- tusk:writeup "):
                body = body.split("\n", 1)[1]
            out.append((marker["part"] if marker else None, body))
        return out

    def later_run(self, mention: str, *, name: str = "later", requester: bool = False) -> E2E:
        """The next run on the same thread: its own log issue (the bot's, its title naming
        the thread), job, mention and folders; the same GitHub, model and settings. With
        ``requester``, its job marker is build-context's whole one (the requester and the
        budget its mention allows), so the limits across runs count it."""
        jobid = f"job-e2e-widgets-{name}"
        data: dict[str, Any] = {"jobid": jobid}
        if requester:
            budget = self.config.get("agent", {}).get("max_budget_usd", 5.0)
            data.update(repo="alice/widgets", requester="alice", budget_usd=budget)
        issue = {
            "title": "[Agent Log] alice/widgets #1 — 2026-01-01 01:00",
            "body": f"{render_marker('job', data)}\n# Task\n\n> {name}\n",
            "labels": ["workflow"],
        }
        gateway = self.github.gateway(AGENT_TOKEN)
        created = gateway.post("/repos/alice/tusk-control/issues", json=issue).body
        tmp = self.tmp / name
        tmp.mkdir()
        return E2E(
            tmp=tmp,
            github=self.github,
            model=self.model,
            agent_user=self.agent_user,
            config=self.config,
            mention=mention,
            jobid=jobid,
            log_issue_number=int(created["number"]),
        )

    def issue_comments(self, repo: str, number: int) -> list[dict[str, Any]]:
        """The thread's comments but Tusk's own status comment (``status_comment``)."""
        gateway = self.github.gateway(AGENT_TOKEN)
        comments = gateway.paginate(f"/repos/{repo}/issues/{number}/comments")
        return [c for c in comments if first_marker(c["body"], "status") is None]

    def status_comment(self, repo: str, number: int) -> str | None:
        """The body of the run's status comment on the thread (feedback.thread_status)."""
        gateway = self.github.gateway(AGENT_TOKEN)
        comments = gateway.paginate(f"/repos/{repo}/issues/{number}/comments")
        found = [
            c["body"]
            for c in comments
            if (first_marker(c["body"], "status") or {}).get("jobid") == self.jobid
        ]
        assert len(found) <= 1, "one status comment per run"
        return found[0] if found else None

    def state_entries(self, kind: str) -> list[str]:
        """Texts of the history or memory entries, oldest first, as Tusk reads them."""
        settings = load_settings(self.tmp / "tusk.yml")
        store = StateStore(self.github.gateway(AGENT_TOKEN), settings)
        return [entry.text for entry in reversed(store.read_entries(kind))]  # type: ignore[arg-type]

    def events(self) -> list[dict[str, Any]]:
        path = self.tmp / "run" / run_inputs.EVENTS_FILE
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def tool_results(self) -> list[str]:
        out = []
        for event in self.events():
            if event.get("type") != "user":
                continue
            for block in event["message"]["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    content = block.get("content")
                    out.append(content if isinstance(content, str) else json.dumps(content))
        return out


@pytest.fixture
def e2e(tmp_path: Path, local_github: Any, scripted_model: Any, agent_user: str) -> E2E:
    local_github.load(scenario())
    return E2E(tmp=tmp_path, github=local_github, model=scripted_model, agent_user=agent_user)
