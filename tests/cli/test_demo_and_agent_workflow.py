"""The platform as users run it: the demo's mention becomes a traced agent run
through the real agent workflow under act, judged by the local GitHub's state."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tusk.cli.demo import BOT, DEMO_REPO, play_offline
from tusk.contracts.config import DEFAULT_ALLOWED_HOSTS


@pytest.mark.act
@pytest.mark.e2e
def test_demo_turns_the_mention_into_a_completed_traced_run(tmp_path: Path) -> None:
    code, outcome = play_offline(tmp_path)

    assert outcome is not None
    assert outcome.problems() == []
    assert code == 0
    log = outcome.log_issue
    assert log is not None
    assert log["title"].startswith(f"[Agent Log] {DEMO_REPO} #1 — ")
    assert (log["state"], log["state_reason"]) == ("closed", "completed")
    assert [label["name"] for label in log["labels"]] == ["workflow"]
    assert log["body"].index("# Task") < log["body"].index("# Context")
    # What happened, in one line atop the body, from records the agent cannot write:
    # the time, the turns, what was created (the pushed branch with its diff summary),
    # the network as it was, and the Actions run.
    outcome_line = log["body"].split("<!-- tusk:outcome -->\n", 1)[1].split("\n", 1)[0]
    assert outcome_line.startswith("✅ **Completed** · "), outcome_line
    assert re.search(r" · (\d+ min )?\d+ s · \d+ turn\(s\) · \$[\d.]+ · created: ", outcome_line)
    assert "branch `tusk/fix-readme-typo` (1 file(s), +1 −1)" in outcome_line
    assert " · network: " in outcome_line
    assert re.search(
        r"\[Actions run\]\(https://github\.com/alice/tusk-control/actions/runs/\d+", outcome_line
    )
    assert log["body"].index("<!-- tusk:outcome -->") < log["body"].index("# Task")
    # A8: the summary links what the agent created; the transcript follows it.
    # (after the run's progress comment; each write-up comment names its part)
    [summary] = [c["body"] for c in outcome.log_comments if '"part":"summary-1"' in c["body"]]
    pull = outcome.pull_requests[0]
    assert pull["html_url"] in summary
    assert outcome.agent_comments[0]["html_url"] in summary
    assert outcome_line in summary
    assert "### Pushed branches\n- `tusk/fix-readme-typo`: 1 file(s), +1 −1" in summary
    assert any("Transcript" in comment["body"] for comment in outcome.log_comments[2:])
    # The agent's work: a fix pushed from the bot's fork, and a comment stamped with the backlink.
    assert pull["head"]["label"] == f"{BOT}:tusk/fix-readme-typo"
    assert pull["head"]["repo"]["full_name"] == f"{BOT}/widgets"
    assert log["html_url"] in outcome.agent_comments[0]["body"]
    assert f"@{BOT} go away" in outcome.agent_comments[0]["body"]
    # The agent held no key and was fenced (as root, as in CI); the cost is on the log.
    if os.geteuid() == 0:
        assert f"- network: fenced ({len(DEFAULT_ALLOWED_HOSTS)} hosts allowed)" in summary
    assert "- model cost: $" in summary
    # The requester's view: one status comment on the thread, queued, then the outcome
    # with a link to the pull request (working in between when the agent takes 5 s+).
    states = outcome.status_states
    assert states[0].startswith("⏳ **Queued.**"), states
    assert states[-1].startswith("✅ **Done: Completed** pass: "), states
    assert "- branch (1 file(s), +1 −1): " in outcome.status_comment
    assert all(s.startswith("⚙️ **Working.**") for s in states[1:-1]), states
    # The write-up outlives the local GitHub: each part a file in the work folder.
    kept = {path.name: path for path in (tmp_path / "write-up").glob("*.md")}
    assert "00-log-issue.md" in kept
    [summary_file] = [path for name, path in kept.items() if name.endswith("-summary-1.md")]
    assert summary_file.read_text(encoding="utf-8") == summary + "\n"
    assert any(name.endswith("-transcript-1.md") for name in kept)
    # The run's record is signed by the agent job's identity (the local OIDC issuer and
    # Fulcio), stored in the control repository's attestations, named under the audit,
    # and `tusk audit verify` checks it against the stand-ins' trusted_root.json.
    [audit] = [c["body"] for c in outcome.log_comments if "<!-- tusk:audit " in c["body"]]
    assert "<!-- tusk:attestation " in audit and "stored in alice/tusk-control's" in audit
    assert outcome.attestation_verified is not None
    assert "attestation verified: signed by alice/tusk-control/.github/workflows/agent.yml@" in (
        outcome.attestation_verified
    )
    # ... by sigstore-python's Verifier, with the local Rekor's entry and CT log's SCT.
    assert outcome.attestation_verified.endswith(
        "its transparency-log entry verified; checked by sigstore-python's Verifier "
        "(trusted root); the log issue names mode github"
    )


@pytest.mark.act
@pytest.mark.e2e
@pytest.mark.slow
def test_three_demos_started_at_once_on_one_machine_all_succeed(tmp_path: Path) -> None:
    """As several runner processes on one self-hosted machine would: each run has its
    own user, folders, ports and fence, so none disturbs another."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    demos = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tusk.cli.main",
                "demo",
                "--workdir",
                str(tmp_path / f"demo{i}"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        for i in range(3)
    ]
    outputs = [demo.communicate(timeout=1200)[0] for demo in demos]
    for number, (demo, output) in enumerate(zip(demos, outputs, strict=True)):
        tail = "\n".join(output.splitlines()[-30:])
        assert demo.returncode == 0, f"demo {number} failed:\n{tail}"
        assert "Demo succeeded" in output, tail
