"""``tusk init DIR``: write a ready control repository.

Three small caller workflows (``.github/workflows/{agent,poll,go-away}.yml``)
that call Tusk's reusable workflows at ``OWNER/REPO@REF``, a commented
``tusk.yml`` that passes ``tusk config check``, and ``TUSK-SECRETS.md``, the
checklist of secrets and variables to create. Nothing is overwritten without
``--force``; when a file is in the way, nothing at all is written.

Pure part: ``control_files`` (path → text) and ``commented_settings`` (the
keys of ``tusk.yml`` a deployment sets and the ones most often changed, each
with its description from the settings model itself).
"""

from __future__ import annotations

import argparse
import re
import textwrap
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from tusk.cli.tusk_ref import CONFIG_FILE, RELEASE, TuskRef
from tusk.contracts.commands import COMMAND_JOBS
from tusk.contracts.config import Settings, parse_settings
from tusk.contracts.models import LOGIN_PATTERN, REPO_PATTERN
from tusk.errors import InputError, UserError
from tusk.text.render import render

# The command jobs' events, each run by a job of the go-away workflow.
COMMAND_EVENTS = [job.event_type for job in COMMAND_JOBS]

CALLERS = {
    "agent.yml": "init_agent.yml.j2",
    "poll.yml": "init_poll.yml.j2",
    "go-away.yml": "init_go_away.yml.j2",
}
SECRETS_FILE = "TUSK-SECRETS.md"


# --------------------------------------------------------------------------- tusk.yml


def _scalar(value: Any) -> str:
    """One YAML value on one line (flow style), as a human would write it."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    if isinstance(value, tuple):
        value = list(value)
    text = yaml.safe_dump(value, default_flow_style=True, width=10_000, sort_keys=False)
    return text.strip().removesuffix("...").strip()


SET_BY_INIT = ("bot", "control_repo", "allowed_users", "record_only")
"""The keys a deployment sets; every other key keeps its default unless written in."""
OFTEN_CHANGED = (("limits", "max_turns"), ("limits", "run_minutes"))
"""Shown commented out, at their defaults, as the first ones people change."""
INTERNAL_IDS = re.compile(r"\s*\((?:[A-Z]\d+[a-z]?)(?:[ ,/–-]+[A-Z]?\d+[a-z]?)*\)")


def _comment(description: str | None) -> str:
    """A key's description as a short trailing comment, without requirement ids."""
    text = INTERNAL_IDS.sub("", description or "").strip()
    return f"# {textwrap.shorten(text, 56, placeholder='…')}" if text else ""


def _line(indent: str, name: str, value: Any, description: str | None) -> str:
    entry = f"{indent}{name}: {_scalar(value)}"
    comment = _comment(description)
    return f"{entry.ljust(32)} {comment}".rstrip() if comment else entry


def commented_settings(
    *, bot: str, control_repo: str, allowed_users: list[str], record_only: bool
) -> str:
    """A short ``tusk.yml``: the keys a deployment sets, then the ones most often
    changed, commented out at their defaults; every key is documented elsewhere
    (``tusk config schema``, ``tusk.example.yml``), from the settings model itself."""
    values = {
        "bot": bot,
        "control_repo": control_repo,
        "allowed_users": list(allowed_users),
        "record_only": record_only,
    }
    lines = [
        "# tusk.yml: Tusk's policy and limits, written by `tusk init`. These are the keys",
        "# a deployment sets; every other key keeps its default. All keys, their defaults",
        "# and what they do: `tusk config schema`, or tusk.example.yml in Tusk's repository.",
        f"# Secrets never go here (see {SECRETS_FILE}). Check it: `tusk config check`.",
        "",
    ]
    fields = Settings.model_fields
    lines += [_line("", name, values[name], fields[name].description) for name in SET_BY_INIT]
    lines += ["", "# Often changed (remove the # to set one):"]
    for section, name in OFTEN_CHANGED:
        model = fields[section].annotation
        assert isinstance(model, type) and issubclass(model, BaseModel)
        field = model.model_fields[name]
        if f"# {section}:" not in lines:
            lines.append(f"# {section}:")
        lines.append("# " + _line("  ", name, field.default, field.description))
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- files


def caller_files(tusk_ref: TuskRef, *, config: str = CONFIG_FILE) -> dict[str, str]:
    """The three caller workflows, path → text."""
    return {
        f".github/workflows/{name}": render(
            template, tusk=tusk_ref, config=config, commands=COMMAND_EVENTS
        )
        for name, template in CALLERS.items()
    }


def control_files(
    *,
    tusk_ref: TuskRef,
    bot: str,
    control_repo: str,
    allowed_users: list[str],
    record_only: bool = False,
) -> dict[str, str]:
    """Every file ``tusk init`` writes, path (relative to DIR) → text."""
    config_text = commented_settings(
        bot=bot, control_repo=control_repo, allowed_users=allowed_users, record_only=record_only
    )
    # The file must pass `tusk config check`: parse it as that command would.
    settings = parse_settings(yaml.safe_load(config_text), source=CONFIG_FILE)
    files = caller_files(tusk_ref)
    files[CONFIG_FILE] = config_text
    files[SECRETS_FILE] = render("init_secrets.md.j2", tusk=tusk_ref, settings=settings)
    return files


def write_files(target: Path, files: dict[str, str], *, force: bool) -> list[Path]:
    """Write ``files`` under ``target``; refuse (writing nothing) when one exists."""
    paths = {name: target / name for name in files}
    in_the_way = sorted(name for name, path in paths.items() if path.exists())
    if in_the_way and not force:
        raise UserError(
            f"{target}: {len(in_the_way)} file(s) already exist: {', '.join(in_the_way)}",
            "Nothing was written. Pass --force to replace them, or choose an empty folder.",
        )
    written = []
    for name, text in files.items():
        path = paths[name]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


# --------------------------------------------------------------------------- CLI


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "dir",
        type=Path,
        nargs="?",
        help="the control repository's folder (created if new); not with --apply",
    )
    parser.add_argument(
        "--tusk-ref",
        default=str(RELEASE),
        help="the Tusk to run, OWNER/REPO@REF (a tag, branch or commit); "
        f"default: this release, {RELEASE}",
    )
    parser.add_argument("--bot", required=True, help="the bot account's login")
    parser.add_argument(
        "--control-repo", required=True, help="OWNER/REPO of this control repository on GitHub"
    )
    parser.add_argument(
        "--allowed-user",
        action="append",
        required=True,
        metavar="LOGIN",
        help="a login whose mentions start work; repeat for several",
    )
    parser.add_argument(
        "--record-only",
        "--staged",  # its old name, for this release
        dest="record_only",
        action="store_true",
        help="start record-only: agent writes are recorded in the log issue, not performed",
    )
    parser.add_argument("--force", action="store_true", help="replace files that already exist")
    apply = parser.add_argument_group(
        "on GitHub (--apply)",
        "make the deployment through GitHub's API instead of writing DIR: the repository, "
        "its files, labels, state issues, the bot's access, the secrets (from "
        "TUSK_OWNER_TOKEN, TUSK_BOT_TOKEN, TUSK_AGENT_TOKEN, TUSK_READ_TOKEN, "
        "ANTHROPIC_API_KEY), the workflows; then tusk doctor",
    )
    apply.add_argument("--apply", action="store_true", help="make the deployment on GitHub")
    apply.add_argument(
        "--dry-run", action="store_true", help="with --apply: print the plan, write nothing"
    )
    apply.add_argument(
        "--rotate-secrets",
        action="store_true",
        help="with --apply: store the exported values anew (a stored secret is left alone)",
    )
    apply.add_argument(
        "--public", action="store_true", help="with --apply: create the repository public"
    )
    apply.add_argument(
        "--replace-config",
        action="store_true",
        help="with --apply: replace your tusk.yml on GitHub with tusk init's, showing what "
        "changes (without it, a tusk.yml that is there is kept as it is)",
    )


def check_names(args: argparse.Namespace) -> None:
    """Every bad flag at once, in the flags' own words."""
    problems = []
    for login in [args.bot, *args.allowed_user]:
        if not re.match(LOGIN_PATTERN, login):
            problems.append(f"{login!r} is not a GitHub login (letters, digits, hyphens)")
    if not re.match(REPO_PATTERN, args.control_repo):
        problems.append(f"--control-repo {args.control_repo!r} is not OWNER/REPO")
    if problems:
        raise InputError(
            f"{len(problems)} bad value(s) for tusk init",
            "\n".join(f"  - {problem}" for problem in problems)
            + "\nNothing was written. Example: tusk init control "
            "--bot my-bot --control-repo me/tusk-control --allowed-user me",
        )


def check_mode(args: argparse.Namespace) -> None:
    """DIR without --apply, --apply without DIR; the apply flags only with --apply."""
    if args.apply and args.dir is not None:
        raise InputError(
            "--apply writes to GitHub, not to a folder",
            "Drop DIR: tusk init --apply --bot ... --control-repo ... --allowed-user ...",
        )
    if not args.apply and args.dir is None:
        raise InputError(
            "tusk init needs DIR, or --apply",
            "Name the folder to write (tusk init DIR ...) or make the deployment on GitHub "
            "(tusk init --apply ...).",
        )
    extra = [
        flag
        for flag in ("dry_run", "rotate_secrets", "public", "replace_config")
        if getattr(args, flag)
    ]
    if extra and not args.apply:
        flags = ", ".join("--" + flag.replace("_", "-") for flag in extra)
        raise InputError(f"only with --apply: {flags}", "Add --apply, or drop them.")


def run(args: argparse.Namespace) -> int:
    check_names(args)
    check_mode(args)
    tusk_ref = TuskRef.parse(args.tusk_ref)
    files = control_files(
        tusk_ref=tusk_ref,
        bot=args.bot,
        control_repo=args.control_repo,
        allowed_users=list(args.allowed_user),
        record_only=args.record_only,
    )
    if args.apply:
        from tusk.cli.deploy.command import run_apply

        return run_apply(args, files)
    written = write_files(args.dir, files, force=args.force)
    for path in written:
        print(f"wrote {path}")
    print(
        f"\nNext: create the secrets listed in {args.dir / SECRETS_FILE}, push this folder to "
        f"{args.control_repo}, then run `tusk doctor --config {args.dir / CONFIG_FILE}`."
    )
    return 0
