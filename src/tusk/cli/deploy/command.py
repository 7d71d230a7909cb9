"""``tusk init --apply``: the deployment made on GitHub, through its REST API alone.

With the owner's token (``TUSK_OWNER_TOKEN``: classic, ``repo`` and ``workflow``)
and the bot's (``TUSK_BOT_TOKEN``; ``TUSK_AGENT_TOKEN`` and ``TUSK_READ_TOKEN``
when the bot's roles have tokens of their own, else the bot token serves them
too), it reads what GitHub has (``apply_look``), prints the plan
(``apply_plan``), performs each step not done yet (``apply_do``), then runs
``tusk doctor``'s checks and says what is left. ``--dry-run`` stops after the
plan; a second run finds every step done and writes nothing.

Tokens are read once here, masked in Actions logs, and leave Tusk only in the
``Authorization`` header and, sealed, as the secrets' values.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Mapping

import yaml
from pydantic import SecretStr

from tusk import actions_edge
from tusk.cli.deploy.look import look
from tusk.cli.deploy.perform import Applier
from tusk.cli.deploy.plan import (
    BLOCKED,
    Seen,
    Step,
    Wanted,
    checks,
    config_diff,
    is_placeholder,
    plan,
    poll_cost,
)
from tusk.cli.doctor import (
    FAIL,
    OK,
    ROLES,
    STORED_SECRETS,
    WARN,
    Check,
    Doctor,
    judge_token,
    parse_scopes,
    report,
)
from tusk.cli.tusk_ref import CONFIG_FILE
from tusk.contracts.config import Secrets, Settings, load_secrets, parse_settings
from tusk.errors import UserError
from tusk.github.gateway import Gateway, Unauthorized

OWNER_ENV = "TUSK_OWNER_TOKEN"
POLL_FILE = ".github/workflows/poll.yml"
OWNER_SCOPES = ("repo", "workflow")
STATE_KINDS = ("history", "memory", "blocklist")
ROLE_FIELDS = {"TUSK_BOT_TOKEN": "bot_token", "TUSK_AGENT_TOKEN": "agent_token"}
ROLE_FIELDS |= {"TUSK_READ_TOKEN": "read_token", "ANTHROPIC_API_KEY": "anthropic_api_key"}

GatewayFor = Callable[[SecretStr | None, str], Gateway]


def secret_values(secrets: Secrets) -> tuple[dict[str, SecretStr], set[str]]:
    """The value of each secret the workflows read that is exported, and the names whose
    value stands in: a bot role without its own token is served by the bot token
    (classic, with every role's scopes: notifications, repo, delete_repo, workflow)."""
    values, stand_ins = {}, set()
    for name, field_name in ROLE_FIELDS.items():
        value = getattr(secrets, field_name)
        if value is None and name in ("TUSK_AGENT_TOKEN", "TUSK_READ_TOKEN"):
            value = secrets.bot_token
            stand_ins.add(name)
        if value is not None:
            values[name] = value
    return values, stand_ins


def say(text: str = "") -> None:
    """Print a line of the apply; a reader that went away (``| head``) stops the printing,
    never the apply: what is half done is finished, silently."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        # Later lines, and the flush at exit, go nowhere (Python's documented way).
        with contextlib.suppress(AttributeError, OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (kept open)


def wanted_for(
    files: Mapping[str, str],
    settings: Settings,
    args: argparse.Namespace,
    exported: set[str],
    owner_login: str = "",
) -> Wanted:
    return Wanted(
        repo=settings.control_repo,
        private=not args.public,
        bot=settings.bot,
        files=files,
        labels=tuple(settings.labels.model_dump().values()),
        state_kinds=STATE_KINDS,
        secrets=STORED_SECRETS,
        exported=frozenset(exported),
        rotate_secrets=args.rotate_secrets,
        config=CONFIG_FILE,
        replace_config=bool(getattr(args, "replace_config", False)),
        allowed_users=tuple(settings.allowed_users),
        owner_login=owner_login,
    )


def whose(gateway: Gateway, env: str) -> tuple[str, set[str] | None]:
    """The token's login and its classic scopes (None: not a classic token)."""
    try:
        response = gateway.request("GET", "/user")
    except Unauthorized:
        raise UserError(
            f"GitHub refused {env}: mistyped, cut short, expired or revoked",
            "Check that the whole token was exported (classic tokens start with ghp_).",
        ) from None
    return str(response.body["login"]), parse_scopes(response.header("x-oauth-scopes"))


def check_tokens(owner: Gateway, bot: Gateway, settings: Settings) -> str:
    """Whose each token is and whether the owner's may do the set-up; nothing is written
    before both are right. Returns the owner's login."""
    login, scopes = whose(owner, OWNER_ENV)
    missing = [s for s in OWNER_SCOPES if scopes is not None and s not in scopes]
    if missing:
        raise UserError(
            f"{OWNER_ENV} (of {login}) lacks the scope(s) {', '.join(missing)}",
            f"Create a classic token for {login} with {', '.join(OWNER_SCOPES)} (the workflow "
            "scope lets it commit .github/workflows) and export it. Nothing was written.",
        )
    bot_login, _ = whose(bot, "TUSK_BOT_TOKEN")
    if bot_login.lower() != settings.bot.lower():
        raise UserError(
            f"TUSK_BOT_TOKEN belongs to {bot_login}, not to the bot {settings.bot}",
            f"If the bot is {bot_login}, pass --bot {bot_login}; else export the bot "
            f"account's own classic token. Nothing was written.",
        )
    if login.lower() == settings.bot.lower():
        raise UserError(
            f"{OWNER_ENV} belongs to the bot {settings.bot}",
            "The control repository's owner is you (or your organisation), never the bot.",
        )
    return login


def check_placeholders(values: Mapping[str, str | None]) -> None:
    """Nothing copied from README's examples is sent or stored."""
    copied = sorted(name for name, value in values.items() if value and is_placeholder(value))
    if copied:
        raise UserError(
            f"{', '.join(copied)}: an example value, not a secret",
            "Export the real value of each (README's `sk-ant-...` and `ghp_...` stand for "
            "your own key and tokens). Nothing was written.",
        )


def check_roles(values: Mapping[str, SecretStr], settings: Settings, make: GatewayFor) -> list[str]:
    """Each bot token about to be stored is the bot's and has its role's scopes (as
    ``tusk doctor`` judges them), so no token the workflows cannot use is stored; returns
    the warnings (a token that holds more than its role needs)."""
    problems, warnings = [], []
    seen: dict[str, tuple[str, set[str] | None]] = {}
    for role in ROLES.values():
        value = values.get(role.env)
        if value is None or role.secret_of != "bot":
            continue
        if value.get_secret_value() not in seen:
            gateway = make(value, role.env.removeprefix("TUSK_").removesuffix("_TOKEN").lower())
            try:
                seen[value.get_secret_value()] = whose(gateway, role.env)
            finally:
                gateway.close()
        login, scopes = seen[value.get_secret_value()]
        check = judge_token(role, login=login, scopes=scopes, expected_login=settings.bot)
        if check.status == FAIL:
            problems.append(check.line())
        elif check.status == WARN:
            warnings.append(check.line())
    if problems:
        raise UserError(
            f"{len(problems)} bot token(s) would be stored that cannot do their job",
            "\n".join(f"  {line}" for line in problems)
            + "\nA role without its own exported token gets TUSK_BOT_TOKEN's value: export "
            "TUSK_AGENT_TOKEN and TUSK_READ_TOKEN, or give the bot token every role's scopes. "
            "Nothing was written.",
        )
    return warnings


def default_gateway(api_url: str) -> GatewayFor:
    def make(token: SecretStr | None, name: str) -> Gateway:
        return Gateway(api_url=api_url, token=token, token_name=name, max_attempts=3)

    return make


def run_apply(
    args: argparse.Namespace,
    files: Mapping[str, str],
    environ: Mapping[str, str] | None = None,
    gateway_for: GatewayFor | None = None,
) -> int:
    env = os.environ if environ is None else environ
    settings = parse_settings(yaml.safe_load(files[CONFIG_FILE]), source=CONFIG_FILE)
    secrets = load_secrets(env)
    owner_value = env.get(OWNER_ENV)
    problems = [
        name
        for name, value in ((OWNER_ENV, owner_value), ("TUSK_BOT_TOKEN", secrets.bot_token))
        if not value
    ]
    if problems:
        raise UserError(
            f"{' and '.join(problems)} not exported",
            f"--apply needs {OWNER_ENV} (your classic token: repo, workflow) and TUSK_BOT_TOKEN "
            "(the bot's classic token). Nothing was written.",
        )
    assert owner_value is not None
    check_placeholders({name: env.get(name) for name in (OWNER_ENV, *ROLE_FIELDS)})
    if actions_edge.in_actions():
        actions_edge.mask(owner_value)
    make = gateway_for or default_gateway(secrets.github_api_url)
    owner = make(SecretStr(owner_value), "owner")
    bot = make(secrets.bot_token, "bot")
    try:
        return _apply(args, files, settings, secrets, owner, bot, make)
    finally:
        owner.close()
        bot.close()


def _apply(
    args: argparse.Namespace,
    files: Mapping[str, str],
    settings: Settings,
    secrets: Secrets,
    owner: Gateway,
    bot: Gateway,
    make: GatewayFor,
) -> int:
    owner_login = check_tokens(owner, bot, settings)
    values, stand_ins = secret_values(secrets)
    wanted = wanted_for(files, settings, args, set(values), owner_login)
    seen = look(owner, wanted, settings)
    before, steps = checks(wanted, seen), plan(wanted, seen)
    storing = {step.target for step in steps if step.kind == "secret" and step.todo}
    notes = [
        f"{name} not exported: the bot token's value is stored for it"
        for name in sorted(stand_ins & storing)
    ] + kept_config_notes(wanted, seen, settings)
    print_plan(wanted, before + steps, notes)
    if wanted.replace_config and (diff := config_diff(wanted, seen)):
        say("\n--replace-config changes your tusk.yml:")
        for line in diff:
            say(f"  {line}")
    # What tusk doctor checks: the exported tokens, and the bot token for a role it is
    # stored for now (a secret stored before may hold another value: it is only named).
    values = {name: v for name, v in values.items() if name not in stand_ins or name in storing}
    for line in check_roles({name: values[name] for name in storing}, settings, make):
        say(f"  note: {line}")
    private = wanted.private if seen.private is None else seen.private
    cost = poll_cost(files.get(POLL_FILE, ""), private)
    say("\nWhat it costs:")
    for line in cost:
        say(f"  {line}")
    if any(step.action == BLOCKED for step in before + steps):
        say("\nNothing was written: do what the ✗ lines say, then run again.")
        return 1
    if args.dry_run:
        say("\n--dry-run: nothing was written.")
        return 0
    applier = Applier(owner, bot, wanted, settings, values)
    todo = [step for step in steps if step.todo]
    if todo:
        say("\nApplying:")
    for step in todo:
        say(f"  {step.kind} {step.target}: {applier.do(step)}")
    code = after_apply(settings, values, set(wanted.secrets), secrets.github_api_url, make)
    say(f"Its cost: {'; '.join(cost[1:])}.")
    return code


def kept_config_notes(wanted: Wanted, seen: Seen, settings: Settings) -> list[str]:
    """What the command line asks that the owner's kept tusk.yml does not say (pure)."""
    if seen.config_text is None or wanted.replace_config:
        return []
    try:
        kept = parse_settings(yaml.safe_load(seen.config_text), source=CONFIG_FILE)
    except (UserError, yaml.YAMLError):
        return [f"your {CONFIG_FILE} on GitHub does not pass `tusk config check`: fix it there"]
    notes = [
        f"--allowed-user {login} is not in your {CONFIG_FILE}'s allowed_users (kept): add it "
        "there, or pass --replace-config"
        for login in settings.allowed_users
        if login.lower() not in {user.lower() for user in kept.allowed_users}
    ]
    if kept.bot.lower() != settings.bot.lower():
        notes.append(f"your {CONFIG_FILE} names the bot {kept.bot}, not {settings.bot}")
    return notes


def print_plan(wanted: Wanted, steps: list[Step], notes: list[str]) -> None:
    todo = sum(1 for step in steps if step.todo)
    total = sum(1 for step in steps if step.kind not in ("allowed user", "your rights"))
    say(f"Plan for {wanted.repo}: {todo} of {total} step(s) to do")
    for step in steps:
        say(f"  {step.line()}")
    for note in notes:
        say(f"  note: {note}")


def stored_not_exported(checks: list[Check], stored: set[str], repo: str) -> list[Check]:
    """A token stored in the repository but not exported here is no failure of the
    deployment: GitHub shows no value, so it is only named (pure)."""
    return [
        Check(c.name, OK, f"not exported here; stored in {repo} (GitHub shows no value)")
        if c.status == FAIL and c.detail == "not set" and c.name in stored
        else c
        for c in checks
    ]


def after_apply(
    settings: Settings,
    values: Mapping[str, SecretStr],
    stored: set[str],
    api_url: str,
    make: GatewayFor,
) -> int:
    """``tusk doctor``'s checks of what was made, and what is left for the person."""
    secrets = Secrets(
        bot_token=values.get("TUSK_BOT_TOKEN"),
        agent_token=values.get("TUSK_AGENT_TOKEN"),
        read_token=values.get("TUSK_READ_TOKEN"),
        github_api_url=api_url,
    )
    gateways: dict[str, Gateway] = {}

    def gateway_for(field: str) -> Gateway:
        if field not in gateways:
            gateways[field] = make(getattr(secrets, field), field.removesuffix("_token"))
        return gateways[field]

    try:
        checks = Doctor(settings, secrets, gateway_for).run_checks()
        checks = stored_not_exported(checks, stored, settings.control_repo)
    finally:
        for gateway in gateways.values():
            gateway.close()
    lines, code = report(checks)
    say("\ntusk doctor:")
    for line in lines:
        say(line)
    if code:
        say("\nLeft for you: fix the ✗ lines above, then run this command again.")
    else:
        users = ", ".join(settings.allowed_users)
        say(
            f"\nLeft for you: mention @{settings.bot} on an issue as {users}; the poll "
            "workflow picks it up within five minutes. Check it again any time with "
            f"`tusk doctor --control-repo {settings.control_repo}`."
        )
    return code
