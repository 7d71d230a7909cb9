"""What run-claude reads of the runner's environment, by name.

The environment is read once, at the entry point (``main``), into ``RunnerEnv``:
the Actions run's identity, the runner's folders the agent must not read, the
user who called sudo. Nothing else of it travels: no dictionary of the whole
environment (which holds the tokens) is kept or handed on. The tokens and the
model key are read separately into ``tusk.contracts.config.Secrets``, as
``SecretStr``; the one value here that may carry a credential, a gateway URL
with a password in it, is a ``SecretStr`` too, so no repr prints it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, SecretStr


class RunnerEnv(BaseModel):
    """The runner's facts run-claude uses, each under its own name."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    github_actions: bool = False  # GITHUB_ACTIONS=true
    act: bool = False  # ACT=true: a replay by act
    local_demo: bool = False  # TUSK_LOCAL_DEMO=1: Tusk's own offline demo
    run_id: str = ""  # GITHUB_RUN_ID
    run_attempt: str = ""  # GITHUB_RUN_ATTEMPT
    server_url: str = ""  # GITHUB_SERVER_URL
    repository: str = ""  # GITHUB_REPOSITORY: the control repository the run is in
    runner_temp: Path | None = None  # RUNNER_TEMP
    github_workspace: Path | None = None  # GITHUB_WORKSPACE
    runner_tool_cache: Path | None = None  # RUNNER_TOOL_CACHE
    sudo_uid: int | None = None  # SUDO_UID: who called sudo
    anthropic_base_url: SecretStr | None = None  # ANTHROPIC_BASE_URL
    claude_code_max_retries: int | None = None  # CLAUDE_CODE_MAX_RETRIES

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> RunnerEnv:
        def path(name: str) -> Path | None:
            value = environ.get(name, "")
            return Path(value) if value else None

        def number(name: str) -> int | None:
            value = environ.get(name, "").strip()
            return int(value) if value.isdigit() else None

        base_url = environ.get("ANTHROPIC_BASE_URL", "")
        return cls(
            github_actions=environ.get("GITHUB_ACTIONS") == "true",
            act=environ.get("ACT") == "true",
            local_demo=environ.get("TUSK_LOCAL_DEMO") == "1",
            run_id=environ.get("GITHUB_RUN_ID", ""),
            run_attempt=environ.get("GITHUB_RUN_ATTEMPT", ""),
            server_url=environ.get("GITHUB_SERVER_URL", ""),
            repository=environ.get("GITHUB_REPOSITORY", ""),
            runner_temp=path("RUNNER_TEMP"),
            github_workspace=path("GITHUB_WORKSPACE"),
            runner_tool_cache=path("RUNNER_TOOL_CACHE"),
            sudo_uid=number("SUDO_UID"),
            anthropic_base_url=SecretStr(base_url) if base_url else None,
            claude_code_max_retries=number("CLAUDE_CODE_MAX_RETRIES"),
        )

    @property
    def isolation_required(self) -> bool:
        """Whether this run is in GitHub Actions, where isolation is never optional.

        The one exception is Tusk's own offline demo replayed by act
        (``ACT=true`` with ``TUSK_LOCAL_DEMO=1``), which an ordinary user may run
        without root; it then says plainly that isolation is off.
        """
        return self.github_actions and not (self.act and self.local_demo)

    @property
    def run_url(self) -> str:
        """This run's page on GitHub (its attempt), or empty outside Actions."""
        if not (self.server_url and self.repository and self.run_id.isdigit()):
            return ""
        url = f"{self.server_url.rstrip('/')}/{self.repository}/actions/runs/{self.run_id}"
        return url + (f"/attempts/{self.run_attempt}" if self.run_attempt.isdigit() else "")

    @property
    def run_key(self) -> str:
        """This run's identity: the Actions run id and attempt, or ``local`` outside Actions."""
        attempt = self.run_attempt or "1"
        if self.run_id.isdigit() and attempt.isdigit():
            return f"{self.run_id}-{attempt}"
        return "local"

    @property
    def runner_dirs(self) -> tuple[Path, ...]:
        """The runner's folders (step scripts, event payloads, env files, tools)."""
        named = (self.runner_temp, self.github_workspace, self.runner_tool_cache)
        return tuple(path for path in named if path is not None)
