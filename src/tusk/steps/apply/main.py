"""``tusk apply``: the CLI edge of the apply action (``@bot apply`` / ``@bot discard``).

Reads the ``tusk-approval`` dispatch, reads the comment back from GitHub and
decides (``decide``): who may approve, which set, whether it still waits. A
refusal is answered on the thread, once. A discard records the verdict on the
log issue and says so in the preview. An apply loads the set by its digest
from the log issue (fail closed: ``tusk.approval.staged_set.read_set``), seeds
the run folder with the run's audit chain as the log issue holds it, runs the
apply engine (``tusk mcp apply``, in its own process: the engine is the MCP
server's policy and tools, which no step imports; the hop costs one interpreter
start and keeps that rule without an exception), reads what it made from its
report file (``tusk.approval.apply_report``), posts the continued chain on the log
issue, records the verdict with links and updates the preview.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from tusk import actions_edge
from tusk.approval.apply_report import failure_of
from tusk.attest.keyless import AttestationMode, try_signer
from tusk.attest.statement import RunClaims
from tusk.audit.chain import created_items, read_records
from tusk.contracts import commands
from tusk.contracts.config import Settings, load_secrets, load_settings, resolve_config_path
from tusk.contracts.models import ApprovalRequest
from tusk.errors import InputError
from tusk.github.gateway import Gateway, gateway_from_secrets
from tusk.issues.state import StateStore
from tusk.steps.apply import chain
from tusk.steps.apply.decide import Verdict, decide
from tusk.steps.apply.github_side import (
    Waiting,
    post_once,
    previews,
    read_comment,
    record_verdict,
    rights_over,
    settle_status,
    update_preview,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--payload", help="the tusk-approval event; default: $GITHUB_EVENT_PATH")
    parser.add_argument("--config", help="tusk.yml; default: $TUSK_CONFIG or ./tusk.yml")
    parser.add_argument("--run-dir", type=Path, help="working folder (default: under RUNNER_TEMP)")


def read_request(path: Path) -> ApprovalRequest:
    """The request from a payload file or a whole ``repository_dispatch`` event."""
    return commands.read_request(commands.APPROVAL, path)


def run(args: argparse.Namespace) -> int:
    config_path = resolve_config_path(args.config)
    settings = load_settings(config_path)
    payload = args.payload or os.environ.get("GITHUB_EVENT_PATH")
    if not payload:
        raise InputError("no approval payload", "Pass --payload or run from the dispatch event.")
    request = read_request(Path(payload))
    gateway = gateway_from_secrets(load_secrets(), "agent")
    run_dir = args.run_dir or Path(
        tempfile.mkdtemp(prefix="tusk-apply-", dir=os.environ.get("RUNNER_TEMP"))
    )
    outcome = handle(request, settings, gateway, run_dir=run_dir, config_path=config_path)
    print(outcome)
    actions_edge.set_outputs({"outcome": outcome.split(":", 1)[0]})
    return 0 if not outcome.startswith("failed") else 1


def handle(
    request: ApprovalRequest,
    settings: Settings,
    gateway: Gateway,
    *,
    run_dir: Path,
    config_path: Path,
    now: datetime | None = None,
) -> str:
    """Act on one approval comment; returns ``applied|discarded|refused|failed: why``."""
    bot = settings.bot
    # A repository that sent the bot away gets no more of its writes, not even a reply.
    quiet = StateStore(gateway, settings).read_blocklist().blocks(request.repo)
    say = Answer(gateway, request, bot=bot, quiet=quiet)
    comment = read_comment(gateway, request, bot=bot)
    waiting = previews(gateway, request, bot=bot)
    rights = rights_over(
        gateway,
        waiting,
        author=comment.author or request.actor,
        verb=comment.command.verb if comment.command else request.verb,
        thread_repo=request.repo,
        bot=bot,
        control_repo=settings.control_repo,
    )
    verdict = decide(
        comment,
        actor=request.actor,
        allowed=settings.agent.approvers or settings.allowed_users,
        rights=rights,
        pending=[w.pending for w in waiting],
        now=now or datetime.now(UTC),
    )
    target = next((w for w in waiting if w.pending.digest == verdict.digest), None)
    if verdict.act == "refuse" or target is None:
        return say.refused(verdict.reason or "no such set")
    if target.staged is None:
        return say.refused(f"the staged set cannot be loaded: {target.problem}")
    if verdict.act == "discard":
        return discarded(say, target, verdict)
    return applied(
        say,
        target,
        verdict,
        run_dir=run_dir,
        config_path=config_path,
        attestation=settings.attestation,
    )


@dataclass(frozen=True)
class Answer:
    """What the apply step says on the thread: nothing where the bot was sent away."""

    gateway: Gateway
    request: ApprovalRequest
    bot: str
    quiet: bool

    def refused(self, reason: str) -> str:
        if not self.quiet:
            body = f"Nothing was applied: {reason}."
            request = self.request
            post_once(
                self.gateway, request.repo, request.number, body, key=request.jobid, bot=self.bot
            )
        return f"refused: {reason}"

    def verdict(self, target: Waiting, digest: str, state: str, said: str) -> None:
        """The verdict on the log issue, and at the top of the preview."""
        assert target.staged is not None
        record_verdict(
            self.gateway,
            target.staged,
            digest=digest,
            state=state,
            body=said,
            key=f"{self.request.jobid}-{state}",
            bot=self.bot,
        )
        if not self.quiet:
            mark = {"applied": "✅ ", "discarded": "🗑️ "}.get(state, "❌ ")
            update_preview(self.gateway, self.request.repo, target.preview, mark + said)
            settle_status(
                self.gateway,
                self.request.repo,
                self.request.number,
                bot=self.bot,
                jobid=target.staged.jobid,
                verdict=f"{mark}**{state.capitalize()}.** {said}",
            )


def discarded(say: Answer, target: Waiting, verdict: Verdict) -> str:
    request = say.request
    said = f"Discarded by `{request.actor}` ({request.comment_url}); it can never be applied."
    say.verdict(target, verdict.digest, "discarded", said)
    return f"discarded: {verdict.digest}"


def run_engine(
    set_file: Path, run_dir: Path, config_path: Path
) -> subprocess.CompletedProcess[str]:
    """The apply engine (``tusk mcp apply``) in its own process, the tokens in its environment."""
    engine = subprocess.run(
        [
            sys.executable,
            "-m",
            "tusk.cli.main",
            "mcp",
            "apply",
            "--set",
            str(set_file),
            "--run-dir",
            str(run_dir),
            "--config",
            str(config_path),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    print(engine.stdout, end="")
    print(engine.stderr, end="", file=sys.stderr)
    return engine


def applied(
    say: Answer,
    target: Waiting,
    verdict: Verdict,
    *,
    run_dir: Path,
    config_path: Path,
    attestation: AttestationMode = "off",
) -> str:
    staged, request = target.staged, say.request
    assert staged is not None
    run_dir.mkdir(parents=True, exist_ok=True)
    problem = chain.seed(target.log_comments, run_dir / "audit.jsonl", jobid=staged.jobid)
    if problem:
        return say.refused(problem)
    seeded = len(read_records(run_dir / "audit.jsonl"))
    set_file = run_dir / "set.json"
    set_file.write_text(staged.model_dump_json(), encoding="utf-8")
    engine = run_engine(set_file, run_dir, config_path)
    claims = RunClaims(
        jobid=staged.jobid,
        run=f"apply-{request.jobid}",
        repository=staged.repo,
        requester=request.actor,
        trigger=request.comment_url,
        outcome="applied" if engine.returncode == 0 else "failed",
        cost_usd=None,
        head="",  # the continued chain's, filled in when its parts are made
        staged=verdict.digest.removeprefix("sha256:"),
        step="apply",
    )
    chain.post(
        say.gateway,
        staged,
        run_dir / "audit.jsonl",
        run=f"apply-{request.jobid}",
        bot=say.bot,
        claims=claims,
        signing=try_signer(attestation, os.environ),
    )
    records = read_records(run_dir / "audit.jsonl")[seeded:]  # this apply's, not the run's
    links = [item.url for item in created_items(records)]
    made = ", ".join(links) or "nothing"
    if engine.returncode == 0:
        said = f"Applied as approved by `{request.actor}` ({request.comment_url}): {made}"
        state, outcome = "applied", f"applied: {verdict.digest}"
    else:
        last = failure_of(run_dir)
        said = f"Not fully applied (approved by `{request.actor}`): {last}. Made: {made}"
        state, outcome = "failed", f"failed: {last}"
    say.verdict(target, verdict.digest, state, said)
    return outcome
