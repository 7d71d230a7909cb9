"""What one run is given and what it gives back, and the files of its run folder."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tusk.contracts.config import Secrets, Settings
from tusk.contracts.models import RunMetadata
from tusk.contracts.pricing import Spend
from tusk.steps.run_claude.runner_env import RunnerEnv
from tusk.steps.run_claude.writeup.outcome import Outcome
from tusk.steps.run_claude.writeup.publish import AUDIT_FILE, EVENTS_FILE, STAGED_FILE

__all__ = ["AUDIT_FILE", "EVENTS_FILE", "STAGED_FILE", "JobInputs", "JobResult"]


@dataclass(frozen=True)
class JobInputs:
    run: RunMetadata
    run_json: Path
    settings: Settings
    config_path: Path | None
    secrets: Secrets
    anthropic_base_url: str | None
    claude: Path
    run_dir: Path
    max_retries: int
    runner: RunnerEnv = field(default_factory=RunnerEnv)
    budget_seconds: float | None = None

    def resolve(self, path: str) -> Path:
        """run.json's paths are absolute or relative to run.json itself."""
        candidate = Path(path)
        return candidate if candidate.is_absolute() else self.run_json.parent / candidate


@dataclass
class JobResult:
    outcome: Outcome
    session_id: str | None = None
    comment_urls: list[str] = field(default_factory=list)
    isolation: str = ""
    events_path: Path | None = None
    spend: Spend | None = None
    network: str = ""
    writeup_complete: bool = True
    writeup_failed: list[str] = field(default_factory=list)
    reason: str = ""

    @property
    def ok(self) -> bool:
        """The run ended as it should (completed, or sent away mid-run: its log issue
        closes either way) and its write-up is whole."""
        return self.outcome.closes_as is not None and self.writeup_complete

    @property
    def skipped(self) -> bool:
        """Another delivery took the job over before this run started: nothing to do."""
        return self.outcome.kind == "taken_over"


def secret_values(secrets: Secrets) -> list[str]:
    """Every secret this run holds, for redaction."""
    held = (
        secrets.agent_token,
        secrets.read_token,
        secrets.anthropic_api_key,
        secrets.anthropic_auth_token,
        secrets.bot_token,
        secrets.dispatch_token,
    )
    return [value.get_secret_value() for value in held if value is not None]
