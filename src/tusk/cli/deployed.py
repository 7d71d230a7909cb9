"""The deployment's ``tusk.yml`` where the person is: a local file (``--config``), or
the one the control repository's workflows read, fetched through the API
(``--control-repo OWNER/REPO``) with a token of the bot, so ``tusk doctor`` and
``tusk usage`` work right after ``tusk init --apply`` with no file on the machine."""

from __future__ import annotations

import argparse
import base64
import re

from tusk.contracts.config import (
    Secrets,
    Settings,
    load_settings,
    resolve_config_path,
    settings_from_text,
)
from tusk.contracts.models import REPO_PATTERN
from tusk.errors import InputError, UserError
from tusk.github.gateway import Forbidden, Gateway, NotFound, gateway_from_secrets

CONFIG_PATH = "tusk.yml"
READERS = (("read", "read_token"), ("bot", "bot_token"), ("agent", "agent_token"))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--config", help="the deployment's tusk.yml (default: $TUSK_CONFIG, then ./tusk.yml)"
    )
    where.add_argument(
        "--control-repo",
        metavar="OWNER/REPO",
        help="read tusk.yml from this control repository through the API instead "
        "(with TUSK_READ_TOKEN, else TUSK_BOT_TOKEN, else TUSK_AGENT_TOKEN)",
    )


def settings_for(args: argparse.Namespace, secrets: Secrets) -> tuple[Settings, str]:
    """The settings, and where they were read (a path, or ``OWNER/REPO:tusk.yml``)."""
    repo = getattr(args, "control_repo", None)
    if not repo:
        path = resolve_config_path(args.config)
        return load_settings(path), str(path)
    if not re.match(REPO_PATTERN, repo):
        raise InputError(f"--control-repo {repo!r} is not OWNER/REPO", "e.g. me/tusk-control")
    which = next((name for name, field in READERS if getattr(secrets, field) is not None), "bot")
    gateway = gateway_from_secrets(secrets, which, max_attempts=2)
    try:
        return deployed_settings(gateway, repo), f"{repo}:{CONFIG_PATH}"
    finally:
        gateway.close()


def deployed_settings(gateway: Gateway, repo: str) -> Settings:
    source = f"{repo}:{CONFIG_PATH}"
    try:
        body = gateway.get(f"/repos/{repo}/contents/{CONFIG_PATH}")
    except (NotFound, Forbidden):
        raise UserError(
            f"{source} cannot be read: no such repository or file, or the token may not read it",
            f"Check the name; `tusk init --apply` makes {repo} with its {CONFIG_PATH}, and "
            "the bot (whose token is read here) must be its collaborator.",
        ) from None
    if not isinstance(body, dict) or body.get("type") != "file":
        raise UserError(f"{source} is not a file", f"Put the deployment's {CONFIG_PATH} there.")
    text = base64.b64decode(body.get("content") or "").decode("utf-8", errors="replace")
    return settings_from_text(text, source=source)
