"""``tusk demo --approve``: staged, previewed on the thread, approved by a comment and
applied, through the real workflows under act, judged by the local GitHub's state."""

from __future__ import annotations

from pathlib import Path

import pytest

from tusk.cli.demo import BOT, play_offline
from tusk.text.markers import first_marker


@pytest.mark.act
@pytest.mark.e2e
def test_demo_approve_stages_previews_and_applies_once_approved(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, outcome = play_offline(tmp_path, approve=True)
    printed = capsys.readouterr().out
    assert outcome is not None
    assert outcome.problems() == [] and code == 0, printed[-3000:]
    # Before the approval: staged, not made; the preview on the thread.
    assert f"== Staged, not made: 0 comment(s) and 0 pull request(s) by {BOT}" in printed
    assert "Waiting for approval: 3 write(s) staged, none made" in printed
    assert "tusk-approval dispatch" in printed
    # After it: the comment and the pull request, once; the preview says so.
    assert f"== Applied: 1 comment(s) and 1 pull request(s) by {BOT} now" in printed
    [preview] = [c for c in outcome.agent_comments if first_marker(c["body"], "preview")]
    assert "✅ Applied as approved by `alice`" in preview["body"]
    assert len(outcome.pull_requests) == 1
    # The audit on the log issue covers the run and its apply.
    assert outcome.audit_verified is not None and "(run apply-" in outcome.audit_verified
    # The apply's continuation is signed by the go-away workflow's job, the run's by the agent's.
    signed = outcome.attestation_verified or ""
    assert (
        ": attestation verified: signed by alice/tusk-control/.github/workflows/go-away.yml@"
        in (signed)
    )
    assert "attestation verified: signed by alice/tusk-control/.github/workflows/agent.yml@" in (
        signed
    )
