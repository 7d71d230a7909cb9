"""run-claude's action.yml beyond what every action is checked for
(tests/platform): outputs come from the run step (or the clean-up step that
finished its write-up), and cleanup always runs."""

from __future__ import annotations

from pathlib import Path

import yaml

ACTION = Path(__file__).resolve().parents[3] / "actions" / "run-claude"


def load() -> dict:
    return yaml.safe_load((ACTION / "action.yml").read_text())


# The clean-up step finishes a write-up the run step could not (SIGKILL): what it says wins.
FROM_CLEANUP = {"outcome", "write-up", "write-up-failed"}


def test_every_output_comes_from_the_run_step() -> None:
    action = load()
    for name, output in action["outputs"].items():
        if name in FROM_CLEANUP:
            expected = f"${{{{ steps.cleanup.outputs.{name} || steps.run.outputs.{name} }}}}"
        else:
            expected = f"${{{{ steps.run.outputs.{name} }}}}"
        assert output["value"] == expected


def test_cleanup_runs_even_when_the_run_step_failed() -> None:
    steps = load()["runs"]["steps"]
    cleanup = [s for s in steps if "--cleanup" in s.get("run", "")]
    assert cleanup and all(s.get("if") == "always()" for s in cleanup)
    assert steps.index(cleanup[-1]) == len(steps) - 1


def test_secrets_reach_only_the_run_step_and_the_agent_token_the_cleanup() -> None:
    steps = load()["runs"]["steps"]
    holders = {
        s["name"]: sorted(
            k for k, v in (s.get("env") or {}).items() if "token" in str(v) or "api-key" in str(v)
        )
        for s in steps
    }
    holders = {name: keys for name, keys in holders.items() if keys}
    # The job's own token (``job-token``) stores the run's attestation: only the two
    # steps that sign get it.
    assert holders == {
        "Run Claude Code": [
            "ANTHROPIC_API_KEY",
            "TUSK_AGENT_TOKEN",
            "TUSK_JOB_TOKEN",
            "TUSK_READ_TOKEN",
        ],
        # to finish (and sign) the write-up after a SIGKILL; never the read token or the key
        "Clean up after Claude Code": ["TUSK_AGENT_TOKEN", "TUSK_JOB_TOKEN"],
    }
