"""``tusk mcp serve`` as run-claude starts it: a subprocess, tokens only in its environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml

from tests.mcp.mcp_harness import AGENT_TOKEN, READ_TOKEN, agent_session, context
from tusk.contracts.models import RunMetadata

pytestmark = pytest.mark.anyio

RUN_LOG = "http://example.test/alice/tusk-control/issues/5"
BEARER = "cli-run-bearer-0123456789"


def write_run_files(tmp_path: Path) -> tuple[Path, Path, Path]:
    config = tmp_path / "tusk.yml"
    config.write_text(
        yaml.safe_dump(
            {"bot": "tusk-bot", "control_repo": "alice/tusk-control", "allowed_users": ["alice"]}
        )
    )
    ctx = tmp_path / "context.json"
    ctx.write_text(context().model_dump_json())
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    meta = RunMetadata(
        jobid="job-widgets-1",
        repo="alice/widgets",
        trigger_url="https://github.com/alice/widgets/issues/1",
        trigger_type="issue_comment",
        thread_number=1,
        log_issue_number=5,
        log_issue_url=RUN_LOG,
        control_repo="alice/tusk-control",
        task_path="task.md",
        context_path="context.md",
        context_file=str(ctx),
    )
    (run_dir / "run.json").write_text(meta.model_dump_json())
    return config, ctx, run_dir


async def test_serve_prints_its_url_first_and_keeps_tokens_out_of_argv(
    start_mcp: Any, local_github: Any, tmp_path: Path
) -> None:
    config, ctx, run_dir = write_run_files(tmp_path)
    env = {
        **os.environ,
        "TUSK_AGENT_TOKEN": AGENT_TOKEN,
        "TUSK_READ_TOKEN": READ_TOKEN,
        "TUSK_GITHUB_API_URL": local_github.url,
        "TUSK_MCP_BEARER": BEARER,
    }
    env.pop("GITHUB_ACTIONS", None)
    args = [sys.executable, "-m", "tusk.cli.main", "mcp", "serve", "--port", "0"]
    args += ["--run-dir", str(run_dir), "--context", str(ctx), "--config", str(config)]
    process = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), url
        cmdline = Path(f"/proc/{process.pid}/cmdline").read_bytes()
        for secret in (AGENT_TOKEN, READ_TOKEN, BEARER):
            assert secret.encode() not in cmdline
        assert requests.post(url, json={}, timeout=10).status_code == 401
        async with agent_session(url, bearer=BEARER) as agent:
            await agent.ok("create_comment", repo="alice/widgets", number=1, body="from the CLI")
    finally:
        process.terminate()
        process.wait(timeout=10)
    posted = local_github.gateway("alice").get("/repos/alice/widgets/issues/1/comments")[-1]
    assert RUN_LOG in posted["body"]  # the log issue came from run.json
    audit = (run_dir / "audit.jsonl").read_text()
    assert audit.count("\n") == 2 and '"code":"UNAUTHORIZED"' in audit.replace(" ", "")


def test_serve_without_a_log_issue_explains_what_is_missing(
    tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    from tusk.cli.main import main as tusk_main

    config, ctx, run_dir = write_run_files(tmp_path)
    (run_dir / "run.json").unlink()
    monkeypatch.setenv("TUSK_AGENT_TOKEN", AGENT_TOKEN)
    monkeypatch.setenv("TUSK_READ_TOKEN", READ_TOKEN)
    monkeypatch.setenv("TUSK_MCP_BEARER", BEARER)
    args = ["mcp", "serve", "--run-dir", str(run_dir), "--context", str(ctx)]
    assert tusk_main([*args, "--config", str(config)]) == 1
    assert "--log-issue-url" in capsys.readouterr().err


def test_serve_refuses_to_start_without_a_bearer_secret(
    tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    from tusk.cli.main import main as tusk_main

    config, ctx, run_dir = write_run_files(tmp_path)
    monkeypatch.setenv("TUSK_AGENT_TOKEN", AGENT_TOKEN)
    monkeypatch.setenv("TUSK_READ_TOKEN", READ_TOKEN)
    monkeypatch.delenv("TUSK_MCP_BEARER", raising=False)
    args = ["mcp", "serve", "--run-dir", str(run_dir), "--context", str(ctx)]
    assert tusk_main([*args, "--config", str(config)]) == 1
    assert "TUSK_MCP_BEARER is not set" in capsys.readouterr().err
