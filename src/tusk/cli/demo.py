"""``tusk demo``: one mention becomes a traced agent run, on the embedded local default.

Offline (the default) it starts the local GitHub with the demo scenario (a
maintainer asks the bot to fix a typo) and the scripted model, runs the
poller once, plays each ``repository_dispatch`` through the agent workflow
under ``act`` (the real composite actions, the real Claude Code, the real MCP
server), then reads the outcome back from the local GitHub and prints it.

``--live`` runs the same flow on real GitHub (``tusk.cli.demo_live``): it opens the
demo issue on a repository you name, polls until the mention is dispatched,
and waits for the control repository's agent workflow to close the log issue.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from tusk.cli.demo_signing import Signing, start_signing
from tusk.cli.demo_variants import VARIANTS, Stage, while_agent_works, with_config
from tusk.contracts.ranges import float_in
from tusk.errors import UserError
from tusk.github.thread_status import headline_of

BOT = "tusk-bot"
REACTION_EMOJI = {"eyes": "👀", "rocket": "🚀", "confused": "😕"}
MAINTAINER = "alice"
DEMO_REPO = "alice/widgets"
CONTROL_REPO = "alice/tusk-control"
DEMO_CONFIG: dict[str, Any] = {
    "bot": BOT,
    "control_repo": CONTROL_REPO,
    "allowed_users": [MAINTAINER],
    "limits": {"max_turns": 30, "run_minutes": 10},
    # As root the agent's network is fenced; as an ordinary user no fence can be put
    # up, and the demo runs open and says so rather than stopping.
    "agent": {"network_required": False},
}
# The local GitHub's tokens are their own names (sandbox/scenarios/demo.yml).
DEMO_SECRETS = {
    "TUSK_AGENT_TOKEN": "agent",
    "TUSK_READ_TOKEN": "read",
    "ANTHROPIC_API_KEY": "sk-ant-demo-not-a-real-key",
    "GITHUB_TOKEN": "agent",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workdir", type=Path, help="keep the run's files here (default: temp)")
    parser.add_argument("--live", action="store_true", help="run on real GitHub (see README)")
    parser.add_argument(
        "--approve",
        action="store_true",
        help="approval mode: the run's writes are staged and previewed, approved by a comment, "
        "then applied",
    )
    parser.add_argument(
        "--variant",
        choices=sorted(VARIANTS),
        help="try a bot command during or after the run: "
        + "; ".join(f"{v.name}: {v.shows}" for v in VARIANTS.values()),
    )
    parser.add_argument("--repo", help="--live: owner/name where the demo issue is opened")
    parser.add_argument("--config", help="--live: tusk.yml of your deployment")
    parser.add_argument(
        "--timeout-minutes",
        type=float_in(1.0, 360.0),
        default=30.0,
        help="--live: how long to wait for the run",
    )


def run(args: argparse.Namespace) -> int:
    if args.live:
        return run_live(args)
    ignored = [f"--{name}" for name in ("repo", "config") if getattr(args, name)]
    if ignored:
        raise UserError(
            f"{' and '.join(ignored)} only apply to --live",
            "The offline demo runs on its own local GitHub and tusk.yml. To run on real "
            "GitHub: tusk demo --live --repo owner/name [--config tusk.yml].",
        )
    return run_offline(args.workdir, approve=args.approve, variant=args.variant)


# --------------------------------------------------------------------------- offline


@dataclass
class DemoOutcome:
    """What the demo found in the local GitHub after the run."""

    trigger: str
    log_issue: dict[str, Any] | None = None
    log_comments: list[dict[str, Any]] = field(default_factory=list)
    agent_comments: list[dict[str, Any]] = field(default_factory=list)
    pull_requests: list[dict[str, Any]] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)
    trigger_reactions: list[str] = field(default_factory=list)  # the bot's, in order
    status_states: list[str] = field(default_factory=list)  # the thread's status, as it moved
    status_comment: str = ""  # the thread's status comment as it ended
    variant_problems: list[str] = field(default_factory=list)  # what a --variant missed
    audit_artifacts: dict[str, list[str]] = field(default_factory=dict)  # name → files
    audit_verified: str | None = None  # `tusk audit verify LOG-ISSUE-URL`'s line, when it held
    audit_problem: str | None = None
    attestation_verified: str | None = None  # its line on the run's signed record
    expect_attestation: bool = False  # the demo's jobs sign their records

    def problems(self) -> list[str]:
        """Everything that keeps this run from being the success the demo promises."""
        found = []
        if self.log_issue is None:
            found.append("no log issue was opened in the control repository")
        elif (self.log_issue["state"], self.log_issue.get("state_reason")) != (
            "closed",
            "completed",
        ):
            found.append(
                f"the log issue is {self.log_issue['state']}"
                f" ({self.log_issue.get('state_reason') or 'no reason'}), not closed as completed;"
                f" read it: {self.log_issue['html_url']}"
            )
        if not self.agent_comments:
            found.append(f"the agent left no comment on {DEMO_REPO}#1")
        if not self.pull_requests:
            found.append(f"the agent opened no pull request on {DEMO_REPO}")
        if not self.status_states or "Queued" not in self.status_states[0]:
            found.append(f"the run's status on {DEMO_REPO}#1 never said it was queued")
        elif not any(end in self.status_states[-1] for end in ("Done", "Applied", "Stopped")):
            found.append(f"the run's status on {DEMO_REPO}#1 does not end with the outcome")
        stopped = bool(self.status_states) and "Stopped" in self.status_states[-1]
        for wanted in ("eyes",) if stopped else ("eyes", "rocket"):  # a stopped run: 👀 only
            if wanted not in self.trigger_reactions:
                found.append(f"the mention did not get the bot's {REACTION_EMOJI[wanted]}")
        if "confused" in self.trigger_reactions:
            found.append(f"the mention got the bot's {REACTION_EMOJI['confused']}, as if it failed")
        if not any(
            {"audit.jsonl", "events.jsonl"} <= set(f) for f in self.audit_artifacts.values()
        ):
            found.append("no tusk-audit-* artifact holds audit.jsonl and events.jsonl")
        if self.audit_verified is None:
            found.append(
                f"the audit could not be verified from the log issue: {self.audit_problem}"
            )
        elif self.expect_attestation and self.attestation_verified is None:
            found.append("the run's attestation was not verified")
        return found


def demo_config(approve: bool, variant: str | None = None) -> dict[str, Any]:
    """The demo's tusk.yml; ``--approve`` requires approval for every write, and a
    ``--variant`` adds what it needs."""
    config = dict(DEMO_CONFIG)
    if approve:
        from tusk.cli.demo_approve import APPROVAL_CONFIG

        config = with_config(config, {"agent": APPROVAL_CONFIG})
    return with_config(config, VARIANTS[variant].config) if variant else config


def scenario_path(name: str) -> Path:
    return Path(str(resources.files("tusk.sandbox.scenarios").joinpath(name)))


def run_offline(workdir: Path | None, *, approve: bool = False, variant: str | None = None) -> int:
    code, _ = play_offline(workdir, approve=approve, variant=variant)
    return code


def play_offline(
    workdir: Path | None, *, approve: bool = False, variant: str | None = None
) -> tuple[int, DemoOutcome | None]:
    """Run the demo; return its exit code and what it found in the local GitHub."""
    from tusk.sandbox.act_runner import ControlRepo
    from tusk.sandbox.github_server import start_server
    from tusk.sandbox.model_server import ModelServer
    from tusk.sandbox.scenario import read_scenario_file

    base = Path(workdir or tempfile.mkdtemp(prefix="tusk-demo-"))
    base.mkdir(parents=True, exist_ok=True)
    say(f"Tusk demo: files in {base}")
    if os.geteuid() != 0:
        say(
            "User isolation is OFF: creating the unprivileged agent user needs root, and this "
            "demo runs as an ordinary user. Claude Code runs as you; in GitHub Actions isolation "
            "is never optional. Run the demo as root to see it isolated."
        )
    github = start_server(scenario=read_scenario_file(str(scenario_path("demo.yml"))))
    model = ModelServer(scenario_path(VARIANTS[variant].model if variant else "demo-model.yml"))
    model_url = model.start()
    stack = contextlib.ExitStack()
    signing, root = start_signing(stack, base, CONTROL_REPO)
    try:
        say(f"Local GitHub at {github.url}; scripted model at {model_url}")
        trigger = show_trigger(github.url)
        config = demo_config(approve, variant)
        control = ControlRepo(
            base / "control", repo=CONTROL_REPO, config_text=yaml.safe_dump(config)
        )
        poll_once(github.url, control.root / "tusk.yml")
        dispatches = admin_get(github.url, "/_sandbox/dispatches", github.app.admin_secret)
        if not dispatches:
            raise UserError(
                "the poller dispatched nothing",
                "The mention should have become a tusk-shard dispatch; run "
                "`tusk poll --once` with the demo's tokens to see why.",
            )
        say(f"The poller sent {len(dispatches)} dispatch(es) to {CONTROL_REPO}")
        say(f"Reactions on the mention now: {show_reactions(github.url, trigger)}")
        during = play_runs(variant, dispatches, github, control, model, signing)
        if approve:
            approve_run(github, control, model_url, signing)
        outcome = collect_outcome(github.url, trigger)
        journal = admin_get(github.url, "/_sandbox/journal", github.app.admin_secret)
        outcome.status_states = status_states(journal)
        print_outcome(outcome)
        saved = save_writeup(base / "write-up", outcome)
        if saved:
            say(
                f"\nThe write-up, kept after the local GitHub and its URLs are gone: "
                f"{base / 'write-up'} ({', '.join(path.name for path in saved)})"
            )
        outcome.expect_attestation = True
        verify_audit(github.url, outcome, root)
        problems = outcome.problems()
        if variant and not problems:
            problems = during + try_variant(variant, github, control, model)
            outcome.variant_problems = problems
        if problems:
            say("The demo did not succeed:\n" + "\n".join(f"  - {p}" for p in problems))
            return 1, outcome
        done = f" and then {VARIANTS[variant].shows.removeprefix('then ')}" if variant else ""
        say(f"Demo succeeded: the mention became a traced, completed agent run{done}.")
        return 0, outcome
    finally:
        model.stop()
        github.stop()
        stack.close()


def play_runs(
    variant: str | None,
    dispatches: list[dict[str, Any]],
    github: Any,
    control: Any,
    model: Any,
    signing: Signing,
) -> list[str]:
    """Play the poller's dispatches, a ``--variant`` acting meanwhile if it does."""

    def play_all() -> list[str]:
        for number, dispatch in enumerate(dispatches, start=1):
            run_dispatch(control, github.url, model.url, dispatch, number, signing)
        return []

    stage = lambda: demo_stage(github, control, model, signing)  # noqa: E731
    return while_agent_works(VARIANTS[variant], stage, play_all) if variant else play_all()


def demo_stage(github: Any, control: Any, model: Any, signing: Signing | None = None) -> Stage:
    return Stage(
        demo_gateway(github.url),
        repo=DEMO_REPO,
        bot=BOT,
        control_repo=CONTROL_REPO,
        say=say,
        poll=lambda: poll_once(github.url, control.root / "tusk.yml"),
        dispatches=lambda: admin_get(github.url, "/_sandbox/dispatches", github.app.admin_secret),
        play=lambda d, n: run_dispatch(control, github.url, model.url, d, n, signing),
        model=model,
    )


def try_variant(variant: str, github: Any, control: Any, model: Any) -> list[str]:
    """A bot command tried after the run (``--variant``); returns what it missed."""
    say(f"\n== The variant {variant}: {VARIANTS[variant].shows}")
    return VARIANTS[variant].after(demo_stage(github, control, model))


def say(text: str) -> None:
    print(text, flush=True)


def admin_get(api_url: str, path: str, admin_secret: str) -> Any:
    import requests

    from tusk.sandbox.github_access import ADMIN_HEADER

    response = requests.get(api_url + path, headers={ADMIN_HEADER: admin_secret}, timeout=30)
    response.raise_for_status()
    return response.json()


def demo_gateway(api_url: str) -> Any:
    from pydantic import SecretStr

    from tusk.github.gateway import Gateway

    # The maintainer's token: the demo reads as alice, who owns both repositories.
    return Gateway(api_url=api_url, token=SecretStr("dispatch"), token_name="maintainer")


def show_trigger(api_url: str) -> str:
    gateway = demo_gateway(api_url)
    comments = gateway.get(f"/repos/{DEMO_REPO}/issues/1/comments")
    trigger = next(c for c in comments if f"@{BOT}" in c["body"])
    say(f"\n== The trigger ({trigger['html_url']})\n@{trigger['user']['login']}: {trigger['body']}")
    return str(trigger["html_url"])


def poll_once(api_url: str, config: Path) -> None:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "TUSK_BOT_TOKEN": "bot-read",
        "TUSK_DISPATCH_TOKEN": "dispatch",
        "TUSK_GITHUB_API_URL": api_url,
    }
    say("\n== Polling the bot's notifications once")
    done = subprocess.run(
        [sys.executable, "-m", "tusk.cli.main", "poll", "--once", "--config", str(config)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    say(textwrap.indent((done.stdout + done.stderr).strip(), "  | "))
    if done.returncode != 0:
        raise UserError(f"the poller failed (exit {done.returncode})", "Its output is above.")


def approve_run(github: Any, control: Any, model_url: str, signing: Signing) -> None:
    """``--approve``: the staged set approved on the thread, then applied."""
    from tusk.cli.demo_approve import approve_and_apply

    approve_and_apply(
        demo_gateway(github.url),
        repo=DEMO_REPO,
        bot=BOT,
        say=say,
        poll=lambda: poll_once(github.url, control.root / "tusk.yml"),
        dispatches=lambda: admin_get(github.url, "/_sandbox/dispatches", github.app.admin_secret),
        play=lambda d, n: run_dispatch(control, github.url, model_url, d, n, signing),
    )


def run_dispatch(
    control: Any,
    api_url: str,
    model_url: str,
    dispatch: dict[str, Any],
    number: int,
    signing: Signing | None = None,
) -> None:
    event = {"action": dispatch["event_type"], "client_payload": dispatch["client_payload"]}
    # The go-away workflow also runs the apply job (tusk-approval).
    workflow = "agent.yml" if dispatch["event_type"] == "tusk-shard" else "go-away.yml"
    say(f"\n== Running {workflow} for dispatch {number} ({dispatch['event_type']}) under act")
    result = control.run(
        "repository_dispatch",
        event,
        workflow=workflow,
        api_url=api_url,
        secrets=DEMO_SECRETS,
        # A run id of its own per demo and dispatch: demos started together on one
        # machine are separate runs, as separate workflow runs are on GitHub.
        env={
            "GITHUB_RUN_ID": str(os.getpid() * 100 + number),
            "TUSK_LOCAL_DEMO": "1",
            **(signing or {}).get(workflow, {}),
        },
        variables={"TUSK_ANTHROPIC_BASE_URL": model_url},
    )
    log = control.root / f"act-{number}.log"
    log.write_text(result.stdout + result.stderr, encoding="utf-8")
    say(f"  act exited {result.returncode}; its log: {log}")
    if not result.ok:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-25:])
        say(textwrap.indent(tail, "  | "))


def collect_outcome(api_url: str, trigger: str) -> DemoOutcome:
    gateway = demo_gateway(api_url)
    outcome = DemoOutcome(trigger=trigger)
    issues = list(gateway.paginate(f"/repos/{CONTROL_REPO}/issues", params={"state": "all"}))
    logs = [i for i in issues if i["title"].startswith("[Agent Log]") and "pull_request" not in i]
    if logs:
        outcome.log_issue = logs[0]
        outcome.log_comments = list(
            gateway.paginate(f"/repos/{CONTROL_REPO}/issues/{logs[0]['number']}/comments")
        )
    comments = list(gateway.paginate(f"/repos/{DEMO_REPO}/issues/1/comments"))
    outcome.agent_comments = [
        c for c in comments if c["user"]["login"] == BOT and headline_of(c["body"] or "") is None
    ]
    outcome.status_comment = next(
        (c["body"] for c in comments if c["user"]["login"] == BOT and headline_of(c["body"] or "")),
        "",
    )
    pulls = gateway.paginate(f"/repos/{DEMO_REPO}/pulls", params={"state": "all"})
    outcome.pull_requests = [p for p in pulls if p["user"]["login"] == BOT]
    outcome.trigger_reactions = trigger_reactions(gateway, trigger)
    outcome.audit_artifacts = audit_artifacts(gateway)
    return outcome


def status_states(journal: list[dict[str, Any]]) -> list[str]:
    """Each state the run's status comment on the thread showed, in order: the bodies
    the bot sent for it, from the local GitHub's journal of requests."""
    states: list[str] = []
    for entry in journal:
        sent = entry.get("body")
        body = sent.get("body") if isinstance(sent, dict) else None
        if entry.get("method") in ("POST", "PATCH") and isinstance(body, str):
            line = headline_of(body)
            if line is not None and (not states or states[-1] != line):
                states.append(line)
    return states


def trigger_reactions(gateway: Any, trigger_url: str) -> list[str]:
    """The bot's reactions on the trigger comment, in the order they came."""
    comments = gateway.paginate(f"/repos/{DEMO_REPO}/issues/1/comments")
    trigger = next((c for c in comments if c["html_url"] == trigger_url), None)
    if trigger is None:
        return []
    found = gateway.paginate(f"/repos/{DEMO_REPO}/issues/comments/{trigger['id']}/reactions")
    return [r["content"] for r in found if r["user"]["login"] == BOT]


def show_reactions(api_url: str, trigger_url: str) -> str:
    found = trigger_reactions(demo_gateway(api_url), trigger_url)
    return " ".join(f"{REACTION_EMOJI.get(r, r)} by {BOT}" for r in found) or "none"


def audit_artifacts(gateway: Any) -> dict[str, list[str]]:
    """The control repository's tusk-audit-* artifacts and the files in each."""
    import io
    import zipfile

    found = {}
    listing = gateway.get(f"/repos/{CONTROL_REPO}/actions/artifacts", params={"per_page": 100})
    for artifact in listing.get("artifacts", []):
        if not str(artifact["name"]).startswith("tusk-audit-"):
            continue
        data = gateway.download(f"/repos/{CONTROL_REPO}/actions/artifacts/{artifact['id']}/zip")
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            found[str(artifact["name"])] = sorted(archive.namelist())
    return found


def verify_audit(api_url: str, outcome: DemoOutcome, root: Path | None = None) -> None:
    """The last step: `tusk audit verify LOG-ISSUE-URL`, from the issue alone."""
    if outcome.log_issue is None:
        outcome.audit_problem = "there is no log issue"
        return
    url = str(outcome.log_issue["html_url"])
    say(f"\n== Verifying the audit from the log issue alone: tusk audit verify {url}")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "TUSK_GITHUB_API_URL": api_url,
        "TUSK_READ_TOKEN": DEMO_SECRETS["TUSK_READ_TOKEN"],
        # The same Tusk as the demo's own (a checkout run with PYTHONPATH=src).
        **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"},
    }
    done = subprocess.run(
        [sys.executable, "-m", "tusk.cli.main", "audit", "verify", url]
        + (["--trust-root", str(root)] if root is not None else []),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    say(textwrap.indent((done.stdout + done.stderr).strip(), "  | "))
    if done.returncode == 0:
        lines = done.stdout.strip().splitlines()
        outcome.audit_verified = lines[0] if lines else ""
        records = outcome.audit_verified.split(": ")[-1].split(" record(s)")[0]
        say(f"The audit was verified from the log issue: {records} record(s), chain intact.")
        signed = [line for line in lines if ": attestation verified: " in line]
        if signed:
            outcome.attestation_verified = signed[0]
            say("Its record is signed by the agent workflow's identity, and the signature holds.")
    else:
        outcome.audit_problem = (done.stderr or done.stdout).strip() or f"exit {done.returncode}"


def save_writeup(folder: Path, outcome: DemoOutcome) -> list[Path]:
    """The log issue, each comment on it (named by its write-up part) and the agent's
    comments as markdown files: the local GitHub, and its URLs, end with the demo."""
    from tusk.text.markers import first_marker

    pages: list[tuple[str, str]] = []
    if outcome.log_issue is not None:
        pages.append(("log-issue", str(outcome.log_issue.get("body") or "")))
    for comment in outcome.log_comments:
        body = str(comment.get("body") or "")
        part = (first_marker(body, "writeup") or {}).get("part")
        pages.append((str(part) if isinstance(part, str) else "log-comment", body))
    pages += [("agent-comment", str(c.get("body") or "")) for c in outcome.agent_comments]
    folder.mkdir(parents=True, exist_ok=True)
    saved = []
    for number, (name, body) in enumerate(pages):
        safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in name)
        path = folder / f"{number:02d}-{safe}.md"
        path.write_text(body + "\n", encoding="utf-8")
        saved.append(path)
    return saved


def print_outcome(outcome: DemoOutcome) -> None:
    log = outcome.log_issue
    if log is not None:
        labels = ", ".join(label["name"] for label in log.get("labels", []))
        say(
            f"\n== The log issue: {log['title']}\n{log['html_url']}"
            f"  [{log['state']}/{log.get('state_reason') or '-'}; labels: {labels}]\n"
        )
        say(textwrap.indent(log.get("body") or "", "    "))
        for comment in outcome.log_comments:
            # The first line people see: hidden markers (write-up part, progress) skipped.
            lines = (comment["body"] or "").strip().splitlines()
            first = [line for line in lines if not line.startswith("<!-- tusk:")][:1]
            say(f"  comment {comment['html_url']}: {first[0] if first else ''}")
        transcripts = [c for c in outcome.log_comments if "ranscript" in (c["body"] or "")[:300]]
        if transcripts:
            say(f"\nThe transcript is on the log issue: {transcripts[0]['html_url']}")
    reactions = " ".join(f"{REACTION_EMOJI.get(r, r)} by {BOT}" for r in outcome.trigger_reactions)
    say(f"\n== Reactions on the mention ({outcome.trigger}): {reactions or 'none'}")
    say(f"== The run's status comment on {DEMO_REPO}#1, as it moved:")
    for number, state in enumerate(outcome.status_states, start=1):
        say(f"  {number}. {state}")
    if outcome.status_comment:
        say(f"== ... and as it ended:\n{textwrap.indent(outcome.status_comment, '    ')}")
    for name, files in outcome.audit_artifacts.items():
        say(f"== The run's artifact {name}: {', '.join(files)}")
    for comment in outcome.agent_comments:
        say(f"\n== The agent's comment ({comment['html_url']})\n{comment['body']}")
    for pull in outcome.pull_requests:
        say(
            f"\n== The agent's pull request #{pull['number']}: {pull['title']}"
            f" ({pull['head']['label']} → {pull['base']['ref']}, {pull['state']})"
            f"\n{pull['html_url']}"
        )


# --------------------------------------------------------------------------- live


def run_live(args: argparse.Namespace) -> int:
    """The demo on real GitHub (``tusk.cli.demo_live``)."""
    from tusk.cli.demo_live import run_live as live

    return live(args)
