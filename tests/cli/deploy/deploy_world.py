"""The local GitHub a new user starts from, and README's "Putting Tusk on your own bot"
read as the tests run it.

The world: the owner and the bot with their classic tokens, and Tusk's public
repository at its release (as github.com has it). The names and command lines are
README's own (``readme_steps``), so the tests run exactly what a reader types.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tusk import REPOSITORY

ROOT = Path(__file__).resolve().parents[3]
SECTION = "## Putting Tusk on your own bot"


@dataclass(frozen=True)
class ReadmeSteps:
    text: str  # the four steps, as README numbers them
    install: str  # step 2's command line
    exports: tuple[str, ...]  # step 3's exported names
    export_line: str  # step 3's export line, example values and all
    apply: list[str]  # step 3's tusk command, as argv after `tusk`
    mention: str  # step 4's comment


def readme_steps() -> ReadmeSteps:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split(SECTION, 1)[1].split("\n## ", 1)[0]
    steps = section.split("\nThe secrets the control repository holds", 1)[0]
    blocks = re.findall(r"```(\w+)\n(.*?)```", steps, re.S)
    lines = [
        (kind, line.strip())
        for kind, block in blocks
        for line in block.splitlines()
        if line.strip()
    ]
    install = next(line for kind, line in lines if line.startswith("pip install"))
    export = next(line for kind, line in lines if line.startswith("export "))
    command = next(line for kind, line in lines if line.startswith("tusk init --apply"))
    mention = next(line for kind, line in lines if kind == "text")
    exports = tuple(word.split("=", 1)[0] for word in shlex.split(export)[1:])
    return ReadmeSteps(steps, install, exports, export, shlex.split(command)[1:], mention)


STEPS = readme_steps()
INSTALLED = STEPS.install.rsplit("@", 1)[1]  # the release README's step 2 installs
ARGS = STEPS.apply[2:]  # after `init --apply`
BOT_LOGIN = ARGS[ARGS.index("--bot") + 1]
CONTROL = ARGS[ARGS.index("--control-repo") + 1]
OWNER_LOGIN = CONTROL.split("/")[0]

OWNER = {"TUSK_OWNER_TOKEN": "ghp_owner0wner"}
BOT = {
    "TUSK_BOT_TOKEN": "ghp_bot0notify",
    "TUSK_AGENT_TOKEN": "ghp_bot0agent",
    "TUSK_READ_TOKEN": "ghp_bot0read",
}
ONE_BOT_TOKEN = "ghp_bot0all"  # README's step 1: one token with every bot role's scopes
KEY = {"ANTHROPIC_API_KEY": "sk-ant-test-not-a-real-key"}
OWNER_TOKEN_SCOPES = ["repo", "workflow"]
ONE_BOT_TOKEN_SCOPES = ["notifications", "repo", "delete_repo", "workflow"]


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
            {"login": OWNER_LOGIN},
            {"login": BOT_LOGIN},
            {"login": REPOSITORY.split("/")[0], "type": "Organization"},
            {"login": "github-actions[bot]"},
        ],
        "tokens": {
            OWNER["TUSK_OWNER_TOKEN"]: {"user": OWNER_LOGIN, "scopes": OWNER_TOKEN_SCOPES},
            ONE_BOT_TOKEN: {"user": BOT_LOGIN, "scopes": ONE_BOT_TOKEN_SCOPES},
            BOT["TUSK_BOT_TOKEN"]: {"user": BOT_LOGIN, "scopes": ["notifications", "repo"]},
            BOT["TUSK_AGENT_TOKEN"]: {
                "user": BOT_LOGIN,
                "scopes": ["repo", "delete_repo", "workflow"],
            },
            BOT["TUSK_READ_TOKEN"]: {"user": BOT_LOGIN, "scopes": ["repo"], "read_only": True},
            **extra_tokens,
        },
        "repos": [
            {
                "name": REPOSITORY,
                "files": {"README.md": "# Tusk\n"},
                "branches": [{"name": INSTALLED, "files": release_files()}],
            }
        ],
    }


def writes(journal: list[dict[str, Any]]) -> list[str]:
    """The requests of the journal that change GitHub (everything but reads)."""
    return [f"{e['method']} {e['path']}" for e in journal if e["method"] not in ("GET", "HEAD")]
