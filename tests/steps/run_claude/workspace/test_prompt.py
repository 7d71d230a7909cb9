"""The first prompt: the task, the context, and the PR diff handed over as a file."""

from __future__ import annotations

from pathlib import Path

from pydantic import SecretStr

from tusk.contracts.config import Secrets, parse_settings
from tusk.contracts.models import RunMetadata
from tusk.steps.run_claude import inputs as run_inputs
from tusk.steps.run_claude.box import folders as box_folders
from tusk.steps.run_claude.workspace import prepare as workspace_prepare


def inputs(tmp_path: Path, *, diff: bool) -> run_inputs.JobInputs:
    build = tmp_path / "build"
    build.mkdir()
    (build / "task.md").write_text("> please fix the typo\n")
    (build / "context.md").write_text("Issue #1 says smal.\n")
    if diff:
        (build / "diff.patch").write_text("--- a/README.md\n+++ b/README.md\n")
    run = RunMetadata(
        jobid="job-prompt-1",
        repo="alice/widgets",
        trigger_url="https://h/t",
        trigger_type="issue_comment",
        log_issue_number=1,
        log_issue_url="https://h/l",
        control_repo="alice/control",
        task_path="task.md",
        context_path="context.md",
        diff_path="diff.patch" if diff else None,
        context_file="context.json",
    )
    return run_inputs.JobInputs(
        run=run,
        run_json=build / "run.json",
        settings=parse_settings(
            {"bot": "tusk-bot", "control_repo": "alice/control", "allowed_users": ["alice"]},
            source="test",
        ),
        config_path=None,
        secrets=Secrets(anthropic_api_key=SecretStr("k")),
        anthropic_base_url=None,
        claude=Path("claude"),
        run_dir=tmp_path / "run",
        max_retries=0,
    )


def test_prompt_holds_task_and_context_and_points_at_the_diff(tmp_path: Path) -> None:
    dirs = box_folders.run_dirs(tmp_path / "agent")
    dirs.context.mkdir(parents=True)
    prompt = workspace_prepare.prepare_context(inputs(tmp_path, diff=True), dirs)
    assert "# Task\n\n> please fix the typo\n" in prompt
    assert "# Context\n\nIssue #1 says smal.\n" in prompt
    assert f"The pull request's full diff is in `{dirs.context / 'diff.patch'}`" in prompt
    assert (dirs.context / "diff.patch").read_text().startswith("--- a/README.md")
    # The run's agent reads it through the folder's group; other users not at all.
    assert (dirs.context / "diff.patch").stat().st_mode & 0o777 == 0o640
    assert "push_branch" in prompt and "`tusk/`" in prompt


def test_no_diff_no_diff_section(tmp_path: Path) -> None:
    dirs = box_folders.run_dirs(tmp_path / "agent")
    dirs.context.mkdir(parents=True)
    assert "# Diff" not in workspace_prepare.prepare_context(inputs(tmp_path, diff=False), dirs)
