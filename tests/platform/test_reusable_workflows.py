"""Tusk's reusable workflows: callable from another repository, never started by
this one, pinned third-party actions, no persisted credentials, and one way of
finding the Tusk release the caller named."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tusk.cli.init import TuskRef, caller_files

ROOT = Path(__file__).resolve().parents[2]
REUSABLE = sorted((ROOT / ".github" / "workflows").glob("tusk-*.yml"))
RELEASE = ROOT / ".github" / "workflows" / "release.yml"  # Tusk's own: on a tag
ACTIONS = sorted((ROOT / "actions").glob("*/action.yml"))
SHA_PIN = re.compile(r"^[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40}$")


def load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def steps_of(document: dict[str, Any]) -> list[dict[str, Any]]:
    if "runs" in document:
        return list(document["runs"]["steps"])
    return [step for job in document["jobs"].values() for step in job.get("steps") or []]


def test_the_three_reusable_workflows_live_where_github_can_call_them() -> None:
    assert [p.name for p in REUSABLE] == ["tusk-agent.yml", "tusk-go-away.yml", "tusk-poll.yml"]
    others = set((ROOT / ".github" / "workflows").glob("*.y*ml")) - set(REUSABLE)
    assert others == {RELEASE}
    assert not (ROOT / "workflows").exists()


@pytest.mark.parametrize("path", REUSABLE, ids=lambda p: p.name)
def test_reusable_workflows_only_run_when_called(path: Path) -> None:
    """Tusk's own repository never starts them: no push, schedule or dispatch trigger."""
    triggers = load(path)[True]  # YAML 1.1 reads the key `on` as True
    assert list(triggers) == ["workflow_call"]


SIGNING_JOBS = {"tusk-agent.yml": {"agent"}, "tusk-go-away.yml": {"undo", "apply"}}


@pytest.mark.parametrize("path", REUSABLE, ids=lambda p: p.name)
def test_only_the_jobs_that_sign_take_what_the_caller_grants(path: Path) -> None:
    """A job that signs its audit record (tusk.attest) declares no permissions, so it
    has the calling job's grant (id-token: write, attestations: write from tusk init's
    callers) and still runs, unsigned, for a caller that grants less; asking for them
    would make GitHub refuse such a caller's whole run. Every other job reads only."""
    workflow = load(path)
    signing = SIGNING_JOBS.get(path.name, set())
    for name, job in workflow["jobs"].items():
        declared = job.get("permissions", workflow.get("permissions"))
        if name in signing:
            assert "permissions" not in job and "permissions" not in workflow, name
        elif path.name == "tusk-poll.yml" and name == "poll":
            assert declared == {"contents": "write"}  # its state branch
        else:
            assert declared == {"contents": "read"}, f"{path.name}: {name}"


SIGNING_ACTIONS = {"run-claude", "undo", "apply"}  # the steps whose Tusk signs a record


@pytest.mark.parametrize("path", REUSABLE, ids=lambda p: p.name)
def test_the_signing_jobs_give_their_own_token_to_the_step_that_signs(path: Path) -> None:
    """The signed record is stored with the job's ``github.token`` (what the caller's
    ``attestations: write`` grants), given as the signing action's ``job-token``; no
    other step gets it."""
    workflow = load(path)
    for name, job in workflow["jobs"].items():
        for step in job.get("steps") or []:
            action = str(step.get("uses", "")).removeprefix("./.tusk/actions/")
            given = (step.get("with") or {}).get("job-token")
            if name in SIGNING_JOBS.get(path.name, set()) and action in SIGNING_ACTIONS:
                assert given == "${{ github.token }}", f"{path.name}: {name}"
            else:
                assert given is None, f"{path.name}: {name}: {step.get('name') or action}"
            if action in SIGNING_ACTIONS:  # nor to them by another name
                assert "github.token" not in str(step.get("env") or {}), f"{path.name}: {name}"


@pytest.mark.parametrize("action", sorted(SIGNING_ACTIONS))
def test_the_job_token_reaches_only_the_steps_that_run_tusk_as_tusk_job_token(
    action: str,
) -> None:
    """Optional (empty: the bot's token stores the bundle, as with older callers), read
    from ``TUSK_JOB_TOKEN`` by the steps that sign and by no install step."""
    meta = load(ROOT / "actions" / action / "action.yml")
    spec = meta["inputs"]["job-token"]
    assert spec.get("required") is False and spec.get("default") == ""
    given = {
        step.get("name"): step["env"]["TUSK_JOB_TOKEN"]
        for step in meta["runs"]["steps"]
        if "TUSK_JOB_TOKEN" in (step.get("env") or {})
    }
    assert set(given.values()) == {"${{ inputs.job-token }}"}
    signing = {
        "run-claude": {"Run Claude Code", "Clean up after Claude Code"},
        "undo": {"Take back the run"},
        "apply": {"Apply or discard the approved set"},
    }
    assert set(given) == signing[action]


@pytest.mark.parametrize(
    "path", [*REUSABLE, RELEASE, *ACTIONS], ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_third_party_actions_are_pinned_by_commit_and_checkouts_keep_no_credentials(
    path: Path,
) -> None:
    text = path.read_text(encoding="utf-8")
    for step in steps_of(load(path)):
        uses = step.get("uses")
        if uses is None or uses.startswith("./"):
            continue
        assert SHA_PIN.match(uses), f"{path.name}: {uses} is not pinned to a commit"
        # The version the commit is, for people: `uses: x@<sha> # vN.N.N`.
        assert re.search(re.escape(uses) + r" # v\d+\.\d+\.\d+", text), uses
        if uses.startswith("actions/checkout@"):
            assert step["with"]["persist-credentials"] is False, f"{path.name}: {step}"


@pytest.mark.parametrize("path", REUSABLE, ids=lambda p: p.name)
def test_tusk_runs_its_own_actions_from_the_release_the_caller_named(path: Path) -> None:
    steps = steps_of(load(path))
    ours = [s["uses"] for s in steps if s.get("uses", "").startswith("./")]
    assert ours and all(u == "./.tusk" or u.startswith("./.tusk/actions/") for u in ours)
    assert "tusk-platform" not in path.read_text(encoding="utf-8")
    locate = [s for s in steps if s.get("id") == "tusk"]
    checkout = [s for s in steps if s.get("with", {}).get("path") == ".tusk"]
    assert locate and len(locate) == len(checkout)
    for step in checkout:
        assert step["with"]["repository"] == "${{ steps.tusk.outputs.repository }}"
        assert step["with"]["ref"] == "${{ steps.tusk.outputs.ref }}"


def test_every_job_finds_tusk_the_same_way() -> None:
    located = [s for p in REUSABLE for s in steps_of(load(p)) if s.get("id") == "tusk"]
    assert len(located) == 7  # agent: receive and agent jobs; poll; go-away, undo, stop, apply
    assert all(step == located[0] for step in located)
    assert "${{" not in located[0]["run"]


def run_locate(tmp_path: Path, files: dict[str, str], tusk_ref: str = "", caller: str = "") -> str:
    """Run the locate step's script as the runner would (shell: python3 {0})."""
    import os
    import subprocess
    import sys

    script = next(s for s in steps_of(load(REUSABLE[0])) if s.get("id") == "tusk")["run"]
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    output = tmp_path / "output"
    output.write_text("")
    env = {
        "PATH": os.environ["PATH"],
        "TUSK_REF": tusk_ref,
        "CALLER": caller,
        "GITHUB_OUTPUT": str(output),
    }
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    return output.read_text() if done.returncode == 0 else "FAILED: " + done.stdout


def test_locate_reads_the_ref_from_the_callers(tmp_path: Path) -> None:
    files = caller_files(TuskRef.parse("acme/tusk@v2.1.0"))
    assert run_locate(tmp_path, files) == "repository=acme/tusk\nref=v2.1.0\n"


def test_locate_prefers_the_calling_workflow_on_github(tmp_path: Path) -> None:
    files = {
        **caller_files(TuskRef.parse("acme/tusk@v2")),
        ".github/workflows/old.yml": "x:\n  uses: acme/tusk/.github/workflows/tusk-poll.yml@v1\n",
    }
    caller = "alice/control/.github/workflows/agent.yml@refs/heads/main"
    assert run_locate(tmp_path, files, caller=caller) == "repository=acme/tusk\nref=v2\n"
    assert run_locate(tmp_path, files).startswith("FAILED: ::error title=Which Tusk?::")


def test_locate_takes_an_explicit_ref_and_refuses_a_malformed_one(tmp_path: Path) -> None:
    assert run_locate(tmp_path, {}, tusk_ref="me/tusk-fork@main") == (
        "repository=me/tusk-fork\nref=main\n"
    )
    assert "is not OWNER/REPO@REF" in run_locate(tmp_path, {}, tusk_ref="me/tusk-fork")
