"""The agent's workspace made ready: the runner's folders closed to the agent, the
context files where it can read them, the repository cloned (``clone``), the
first prompt, and the Claude Code binary at a path the agent can run."""

from __future__ import annotations

from pathlib import Path

from pydantic import SecretStr

from tusk.github.gateway import Gateway
from tusk.steps.run_claude.box import folders
from tusk.steps.run_claude.box.folders import RunDirs
from tusk.steps.run_claude.box.place import Placement, guarded_dirs
from tusk.steps.run_claude.box.principal import Principal
from tusk.steps.run_claude.inputs import JobInputs
from tusk.steps.run_claude.session.mcp_process import SERVER_NAME
from tusk.steps.run_claude.workspace.clone import clone_workspace
from tusk.text.render import render


def prepare(inputs: JobInputs, placed: Placement, *, read_token: SecretStr) -> tuple[str, Path]:
    """Close the runner's folders to the agent, lay out the context and the clone; the
    first prompt and the Claude Code binary the agent can run."""
    run_dir = inputs.run_dir
    if placed.agent is not None:
        folders.close_to_others(guarded_dirs(inputs, placed.runner), user=placed.agent)
    # The MCP server finds the log issue it stamps on every post in RUN_DIR/run.json.
    (run_dir / "run.json").write_text(inputs.run.model_dump_json(indent=2), encoding="utf-8")
    prompt = prepare_context(inputs, placed.dirs)
    clone(inputs, placed.dirs, runner=placed.runner, agent=placed.agent, read_token=read_token)
    claude = folders.reachable_claude(inputs.claude, agent=placed.owner, dirs=placed.dirs)
    return prompt, claude


def prepare_context(inputs: JobInputs, dirs: RunDirs) -> str:
    """Copy the context files where the agent can read them; build the first prompt."""
    run = inputs.run
    task = inputs.resolve(run.task_path).read_text(encoding="utf-8")
    context = inputs.resolve(run.context_path).read_text(encoding="utf-8")
    diff_path = None
    if run.diff_path:
        source = inputs.resolve(run.diff_path)
        if source.is_file():
            diff_path = str(folders.place_context_file(dirs, source, "diff.patch"))
    return render(
        "run_prompt.md.j2",
        repo=run.repo,
        task=task,
        context=context,
        diff_path=diff_path,
        branch_prefix=inputs.settings.agent.branch_prefix,
        tool_prefix=f"mcp__{SERVER_NAME}__",
    )


def clone(
    inputs: JobInputs,
    dirs: RunDirs,
    *,
    runner: Principal,
    agent: Principal | None,
    read_token: SecretStr,
) -> None:
    gateway = Gateway(api_url=inputs.secrets.github_api_url, token=read_token, token_name="read")
    try:
        repo = gateway.get(f"/repos/{inputs.run.repo}")
    finally:
        gateway.close()
    clone_workspace(
        clone_url=str(repo["clone_url"]),
        token=read_token,
        dest=dirs.workspace,
        runner=runner,
        agent=agent,
        committer=inputs.settings.bot,
    )
