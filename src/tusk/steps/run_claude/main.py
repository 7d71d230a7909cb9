"""``tusk run-claude``: run Claude Code isolated, watched, self-checked, written up.

``tusk run-claude --run-json FILE`` does the run; ``tusk run-claude --cleanup
--run-dir DIR`` is the ``if: always()`` step that removes whatever a crashed
run left behind.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from tusk import actions_edge
from tusk.contracts.config import load_secrets, load_settings, resolve_config_path
from tusk.contracts.models import RunMetadata
from tusk.contracts.ranges import float_in, int_in
from tusk.errors import InputError
from tusk.github.gateway import Gateway

if TYPE_CHECKING:
    from tusk.steps.run_claude.runner_env import RunnerEnv

DEFAULT_MAX_RETRIES = 5


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--run-json", type=Path, help="run.json written by build-context")
    parser.add_argument("--config", help="tusk.yml (default: TUSK_CONFIG, then ./tusk.yml)")
    parser.add_argument(
        "--run-dir",
        type=Path,
        help="runner-only folder for the audit log, the event stream and logs "
        "(default: $RUNNER_TEMP/tusk-run-<run id>-<attempt>, else a new temporary folder)",
    )
    parser.add_argument(
        "--claude",
        type=Path,
        help="the Claude Code binary (default: node_modules/.bin/claude of this checkout)",
    )
    parser.add_argument(
        "--max-retries",
        type=int_in(0, 100),
        default=None,
        help=f"CLAUDE_CODE_MAX_RETRIES for the model API (default {DEFAULT_MAX_RETRIES})",
    )
    parser.add_argument(
        "--budget-seconds",
        type=float_in(1.0, 6 * 3600.0),
        default=None,
        help="wall-clock budget of the main session (default: limits.run_minutes)",
    )
    parser.add_argument(
        "--cleanup",
        action="store_true",
        help="only clean up after a run in --run-dir: stop its MCP server, end the agent "
        "user's processes, remove the agent's run folder, and finish the write-up if the "
        "run was killed before it could (needs TUSK_AGENT_TOKEN)",
    )
    parser.add_argument(
        "--write-up",
        action="store_true",
        help="redo the write-up of the run in --run-dir on its log issue: adds the parts that "
        "are missing, never a second copy (needs TUSK_AGENT_TOKEN)",
    )


def run(args: argparse.Namespace) -> int:
    from tusk.steps.run_claude import job
    from tusk.steps.run_claude.inputs import JobInputs
    from tusk.steps.run_claude.runner_env import RunnerEnv
    from tusk.steps.run_claude.session.cancel import cancellable

    if args.cleanup and args.run_dir is None and args.run_json is not None:
        return _never_started(args)
    if args.cleanup or args.write_up:
        if args.run_dir is None:
            flag = "--cleanup" if args.cleanup else "--write-up"
            raise InputError(f"{flag} needs --run-dir", "Pass the run-dir output of the run step.")
        return _after_the_run(args)
    if args.run_json is None:
        raise InputError("--run-json is required", "Pass the run.json build-context wrote.")
    # Installed first: a cancel (SIGINT, SIGTERM) at any point ends in a write-up, never
    # in a traceback.
    with cancellable() as cancel:
        run_meta = RunMetadata.model_validate_json(args.run_json.read_text(encoding="utf-8"))
        config_path = resolve_config_path(args.config)
        settings = load_settings(config_path)
        secrets = load_secrets()
        runner = RunnerEnv.from_environ(os.environ)
        max_retries = args.max_retries
        if max_retries is None:
            max_retries = runner.claude_code_max_retries
        if max_retries is None:
            max_retries = DEFAULT_MAX_RETRIES
        run_dir = args.run_dir or default_run_dir(runner)
        actions_edge.set_outputs({"run-dir": run_dir, "log-issue-url": run_meta.log_issue_url})
        inputs = JobInputs(
            run=run_meta,
            run_json=args.run_json.resolve(),
            settings=settings,
            config_path=config_path,
            secrets=secrets,
            anthropic_base_url=(
                runner.anthropic_base_url.get_secret_value() if runner.anthropic_base_url else None
            ),
            claude=args.claude or find_claude(),
            run_dir=run_dir.resolve(),
            max_retries=max_retries,
            runner=runner,
            budget_seconds=args.budget_seconds,
        )
        try:
            result = job.run_job(inputs, cancel)
        except Exception as error:
            # Later steps branch on `conclusion`: it must say failure, not stay empty.
            reason = str(error).split("\n")[0]
            actions_edge.set_outputs(
                {
                    "conclusion": "failure",
                    "outcome": "setup_failed",
                    "reason": reason,
                    "write-up": "complete",
                }
            )
            raise
        actions_edge.set_outputs(
            {
                "conclusion": "skipped"
                if result.skipped
                else ("success" if result.ok else "failure"),
                "outcome": result.outcome.kind,
                "reason": result.reason or result.outcome.detail or result.outcome.headline,
                "write-up": "complete" if result.writeup_complete else "incomplete",
                "write-up-failed": ",".join(result.writeup_failed),
                "session-id": result.session_id or "",
                "summary-url": result.comment_urls[0] if result.comment_urls else "",
                "events-file": result.events_path or "",
                "cost-usd": f"{result.spend.cost_usd:.4f}" if result.spend else "",
                "network": result.network,
            }
        )
        return 0 if result.ok or result.skipped else 1


def _after_the_run(args: argparse.Namespace) -> int:
    """``--cleanup`` (the ``if: always()`` step) and ``--write-up``: clean up what a run
    left behind and finish its write-up if the run step could not (SIGKILL)."""
    from tusk.steps.run_claude import job
    from tusk.steps.run_claude.inputs import secret_values
    from tusk.steps.run_claude.writeup import kept as record
    from tusk.steps.run_claude.writeup import publish

    secrets = load_secrets()
    gateway = None
    if secrets.agent_token is not None:
        gateway = Gateway(
            api_url=secrets.github_api_url, token=secrets.agent_token, token_name="agent"
        )
    elif args.write_up:
        secrets.require("agent_token")  # raises, naming the variable to set
    held = secret_values(secrets)
    try:
        if args.cleanup:
            lines = job.cleanup(args.run_dir, gateway=gateway, secrets=held)
        else:
            lines = record.finish_writeup(args.run_dir, gateway=gateway, secrets=held)
    finally:
        if gateway is not None:
            gateway.close()
    for line in lines:
        print(line)
    state = publish.load_state(args.run_dir)
    if state is None:
        return 0
    outputs: dict[str, str] = {
        "write-up": "complete" if state.complete else "incomplete",
        "write-up-failed": ",".join(state.failed),
    }
    if state.outcome is not None:
        outputs["outcome"] = state.outcome.kind  # the run step may have died before saying
    actions_edge.set_outputs(outputs)
    return 0 if state.complete else 1


def _never_started(args: argparse.Namespace) -> int:
    """``--cleanup --run-json`` without a run folder: the run step never started (an
    earlier step of the action failed, or the job was cancelled first). Say so on the
    log issue, once, so the failure is visible; a later delivery may take the job over."""
    from tusk.steps.run_claude.inputs import secret_values
    from tusk.steps.run_claude.writeup import kept as record

    run_meta = RunMetadata.model_validate_json(args.run_json.read_text(encoding="utf-8"))
    settings = load_settings(resolve_config_path(args.config))
    secrets = load_secrets()
    token = secrets.require("agent_token")["agent_token"]
    gateway = Gateway(api_url=secrets.github_api_url, token=token, token_name="agent")
    try:
        state, report = record.record_never_started(
            run_meta, settings, gateway, secrets=secret_values(secrets)
        )
    finally:
        gateway.close()
    for line in report.lines():
        print(line)
    actions_edge.set_outputs(
        {
            "outcome": "setup_failed",
            "write-up": "complete" if state.complete else "incomplete",
            "write-up-failed": ",".join(state.failed),
        }
    )
    return 0 if state.complete else 1


def default_run_dir(runner: RunnerEnv) -> Path:
    """Keyed by the Actions run id and attempt, never by job id: two deliveries of one
    job are two runs. Outside Actions, a new temporary folder."""
    key = runner.run_key
    if runner.runner_temp and key != "local":
        return runner.runner_temp / f"tusk-run-{key}"
    return Path(tempfile.mkdtemp(prefix=f"tusk-run-{key}-"))


def find_claude() -> Path:
    """node_modules/.bin/claude of the working directory, else of this checkout."""
    here = Path(__file__).resolve()
    for root in (Path.cwd(), *here.parents):
        candidate = root / "node_modules" / ".bin" / "claude"
        if candidate.exists():
            return candidate
    raise InputError(
        "Claude Code was not found",
        "Run `npm ci` in the Tusk checkout, or pass --claude PATH.",
    )
