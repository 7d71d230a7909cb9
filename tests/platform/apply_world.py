"""The local GitHub a new user starts from: the owner and the bot with their classic
tokens, and Tusk's public repository at its release (as github.com has it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tusk import REPOSITORY, __version__

ROOT = Path(__file__).resolve().parents[2]
CONTROL = "alice/tusk-control"
OWNER = {"TUSK_OWNER_TOKEN": "ghp_owner0wner"}
BOT = {
    "TUSK_BOT_TOKEN": "ghp_bot0notify",
    "TUSK_AGENT_TOKEN": "ghp_bot0agent",
    "TUSK_READ_TOKEN": "ghp_bot0read",
}
KEY = {"ANTHROPIC_API_KEY": "sk-ant-test-not-a-real-key"}
ARGS = ["--bot", "tusk-bot", "--control-repo", CONTROL, "--allowed-user", "alice"]


def release_files() -> dict[str, str]:
    """Tusk's reusable workflows at the release tag, by name (what `tusk doctor` checks
    is that each resolves; under act the callers run this checkout's own)."""
    return {
        f".github/workflows/{path.name}": "on: workflow_call\n"
        for path in sorted((ROOT / ".github" / "workflows").glob("tusk-*.yml"))
    }


def new_user_world(**extra_tokens: Any) -> dict[str, Any]:
    return {
        "now": "2026-12-01T09:00:00Z",
        "users": [
            {"login": "alice"},
            {"login": "tusk-bot"},
            {"login": REPOSITORY.split("/")[0], "type": "Organization"},
            {"login": "github-actions[bot]"},
        ],
        "tokens": {
            "ghp_owner0wner": {"user": "alice", "scopes": ["repo", "workflow"]},
            "ghp_bot0notify": {"user": "tusk-bot", "scopes": ["notifications", "repo"]},
            "ghp_bot0agent": {"user": "tusk-bot", "scopes": ["repo", "delete_repo", "workflow"]},
            "ghp_bot0read": {"user": "tusk-bot", "scopes": ["repo"], "read_only": True},
            **extra_tokens,
        },
        "repos": [
            {
                "name": REPOSITORY,
                "files": {"README.md": "# Tusk\n"},
                "branches": [{"name": f"v{__version__}", "files": release_files()}],
            }
        ],
    }


def writes(journal: list[dict[str, Any]]) -> list[str]:
    """The requests of the journal that change GitHub (everything but reads)."""
    return [f"{e['method']} {e['path']}" for e in journal if e["method"] not in ("GET", "HEAD")]
