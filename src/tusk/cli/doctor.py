"""``tusk doctor``: check a live deployment, one line per check with its fix.

With the tokens in the environment (as the control repository's secrets hold
them) and the deployment's ``tusk.yml``, it asks GitHub:

- each token: whose it is and its scopes (``X-OAuth-Scopes``, sent for
  classic tokens), against what that token is for;
- the bot's notifications can be read;
- the control repository can be written by the bot and dispatched to by the
  dispatch token; the bot is not its owner;
- every allowed user exists;
- the labels Tusk uses exist or can be created (missing ones are created: the
  first run would create them anyway);
- the three caller workflows are in the control repository and call one Tusk
  release whose reusable workflows exist at that ref;
- the poll workflow ran within three intervals of its schedule: GitHub delays
  scheduled runs under load and, "if the load is sufficiently high enough,
  some queued jobs may be dropped" (docs: "schedule" event), and disables
  schedules of public repositories after 60 days without activity.

The verdicts are pure functions over what was fetched (``judge_token`` and
friends); ``run_checks`` does the fetching through the gateway.
"""

from __future__ import annotations

import argparse
import base64
import itertools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from tusk.cli import deployed
from tusk.cli.tusk_ref import RELEASE
from tusk.contracts.config import Secrets, Settings, load_secrets
from tusk.github.gateway import Forbidden, Gateway, NotFound, Unauthorized

OK, FAIL, WARN = "ok", "FAIL", "warn"
MARK = {OK: "✓", FAIL: "✗", WARN: "!"}
CALLERS = ("agent.yml", "poll.yml", "go-away.yml")
REUSABLE_CALL = re.compile(
    r"uses:\s*['\"]?([\w.-]+/[\w.-]+)/\.github/workflows/(tusk-[\w-]+\.ya?ml)@([^\s'\"#]+)"
)


@dataclass(frozen=True)
class Check:
    name: str
    status: str
    detail: str
    fix: str = ""

    def line(self) -> str:
        text = f"{MARK[self.status]} {self.name}: {self.detail}"
        return f"{text} → {self.fix}" if self.fix and self.status != OK else text


@dataclass(frozen=True)
class TokenRole:
    """What one of Tusk's tokens is for, and what it therefore needs."""

    env: str
    secret_of: str  # "bot" or "owner"
    scopes: tuple[str, ...]
    use: str
    unset_is_fine: str = ""  # why a deployment may do without it, when it may


ROLES = {
    "bot_token": TokenRole("TUSK_BOT_TOKEN", "bot", ("notifications", "repo"), "the poller"),
    "dispatch_token": TokenRole(
        "TUSK_DISPATCH_TOKEN",
        "owner",
        ("repo",),
        "dispatching",
        unset_is_fine="the poll workflow dispatches with its own GITHUB_TOKEN (contents: write); "
        "only a poller on a cron host needs it",
    ),
    "agent_token": TokenRole(
        "TUSK_AGENT_TOKEN", "bot", ("repo", "delete_repo", "workflow"), "the agent's writes"
    ),
    "read_token": TokenRole("TUSK_READ_TOKEN", "bot", ("repo",), "the agent's reads"),
}


STORED_SECRETS = ("TUSK_BOT_TOKEN", "TUSK_AGENT_TOKEN", "TUSK_READ_TOKEN", "ANTHROPIC_API_KEY")
"""The secrets the control repository's workflows read (the poll dispatches with its own
GITHUB_TOKEN, so no TUSK_DISPATCH_TOKEN)."""


# --------------------------------------------------------------------------- verdicts


def parse_scopes(header: str | None) -> set[str] | None:
    """``X-OAuth-Scopes`` as a set; None when GitHub sent none (not a classic token)."""
    if header is None:
        return None
    return {scope.strip() for scope in header.split(",") if scope.strip()}


def judge_token(
    role: TokenRole, *, login: str, scopes: set[str] | None, expected_login: str | None
) -> Check:
    """``expected_login`` None: any user will do (the dispatch token is whoever may
    write to the control repository, a person or an organisation's member)."""
    name = role.env
    whose = f"belongs to {login}"
    owner = expected_login or "a user with write access to the control repository"
    fix_token = (
        f"create a classic token for {owner} with {', '.join(role.scopes)} and store it as "
        f"the secret {role.env}"
    )
    if expected_login is not None and login.lower() != expected_login.lower():
        return Check(name, FAIL, f"{whose}, not {expected_login} ({role.use})", fix_token)
    if scopes is None:
        return Check(
            name,
            WARN,
            f"{whose}; GitHub sent no X-OAuth-Scopes, so it is not a classic token and its "
            "rights cannot be listed",
            "classic tokens are the kind the notifications API accepts; " + fix_token,
        )
    missing = [scope for scope in role.scopes if scope not in scopes]
    listed = ", ".join(sorted(scopes)) or "none"
    if missing:
        return Check(name, FAIL, f"{whose}, scopes {listed}; lacks {', '.join(missing)}", fix_token)
    extra = sorted(scopes - set(role.scopes))
    if extra:
        return Check(
            name,
            WARN,
            f"{whose}, scopes {listed}: more than it needs for {role.use} ({', '.join(extra)})",
            f"the least-privilege set-up gives each role a token of its own with only its "
            f"scopes: {fix_token}",
        )
    return Check(name, OK, f"{whose}, scopes {listed}")


def judge_bot_not_owner(settings: Settings, dispatch_login: str | None) -> Check:
    owner = settings.control_repo.split("/")[0]
    name = "bot is not the owner"
    if settings.bot.lower() == owner.lower() or (
        dispatch_login is not None and dispatch_login.lower() == settings.bot.lower()
    ):
        return Check(
            name,
            FAIL,
            f"{settings.bot} owns {settings.control_repo} or its dispatch token",
            "the bot must be its own user: its tokens may then reach only what it was given, "
            "and your dispatch token stays yours",
        )
    return Check(name, OK, f"{settings.bot} is not {owner}")


CRON_LINE = re.compile(r"""^\s*-?\s*cron:\s*['"]?([^'"#\n]+?)['"]?\s*(?:#.*)?$""", re.MULTILINE)
STALE_INTERVALS = 3


def _cron_values(field: str, low: int, high: int) -> set[int] | None:
    """The values one cron field takes (``*``, ``a``, ``a-b``, ``/step``, lists), or
    None when it is not understood."""
    values: set[int] = set()
    for part in field.split(","):
        match = re.fullmatch(r"(\*|\d+)(?:-(\d+))?(?:/(\d+))?", part.strip())
        if not match:
            return None
        start_text, end_text, step_text = match.groups()
        start = low if start_text == "*" else int(start_text)
        end = high if start_text == "*" or (end_text is None and step_text) else start
        end = int(end_text) if end_text is not None else end
        step = int(step_text or 1)
        if step < 1 or not low <= start <= end <= high:
            return None
        values.update(range(start, end + 1, step))
    return values


def runs_a_day(cron: str) -> int | None:
    """How many times a day a daily ``cron`` schedule runs, or None (pure)."""
    fields = cron.split()
    if len(fields) != 5 or any(f != "*" for f in fields[2:]):
        return None
    minutes, hours = _cron_values(fields[0], 0, 59), _cron_values(fields[1], 0, 23)
    return len(minutes) * len(hours) if minutes and hours else None


def schedule_interval(cron: str) -> timedelta | None:
    """The longest gap between two runs of a daily ``cron`` schedule (minute and hour
    fields; day, month and weekday must be ``*``), or None when it is not one (pure)."""
    fields = cron.split()
    if len(fields) != 5 or any(f != "*" for f in fields[2:]):
        return None
    minutes, hours = _cron_values(fields[0], 0, 59), _cron_values(fields[1], 0, 23)
    if not minutes or not hours:
        return None
    times = sorted(h * 60 + m for h in hours for m in minutes)
    gaps = [b - a for a, b in itertools.pairwise(times)]
    gaps.append(times[0] + 24 * 60 - times[-1])
    return timedelta(minutes=max(gaps))


def judge_last_poll(
    poll_text: str | None, last_run: datetime | None, now: datetime | None
) -> Check:
    """A warning when the poll workflow's newest run is older than three intervals."""
    name = "last poll"
    crons = CRON_LINE.findall(poll_text or "")
    intervals = [i for i in (schedule_interval(c.strip()) for c in crons) if i is not None]
    if not intervals or now is None:
        return Check(name, OK, "not checked: poll.yml has no schedule this check reads")
    interval = min(intervals)
    minutes = interval.total_seconds() / 60
    fix = (
        "check the control repository's Actions tab: GitHub delays scheduled runs under load, "
        "may drop them, and disables schedules of public repositories after 60 days without "
        "activity; or poll from a cron host (`tusk poll --loop`)"
    )
    if last_run is None:
        return Check(name, WARN, f"poll.yml has not run yet (schedule every {minutes:g} min)", fix)
    age = now - last_run
    shown = f"{last_run:%Y-%m-%d %H:%M} UTC, {age.total_seconds() / 60:.0f} min ago"
    if age > STALE_INTERVALS * interval:
        detail = f"{shown}: more than {STALE_INTERVALS} × the {minutes:g}-minute schedule"
        return Check(name, WARN, detail, fix)
    return Check(name, OK, shown)


def caller_calls(texts: dict[str, str | None]) -> list[tuple[str, str, str, str]]:
    """(caller file, Tusk repository, reusable workflow, ref) of every call found."""
    return [
        (name, repo, workflow, ref)
        for name, text in texts.items()
        for repo, workflow, ref in REUSABLE_CALL.findall(text or "")
    ]


# --------------------------------------------------------------------------- fetching


@dataclass
class Doctor:
    settings: Settings
    secrets: Secrets
    gateway_for: Callable[[str], Gateway]
    config_name: str = "tusk.yml"  # where the settings were read, for the fixes

    def run_checks(self) -> list[Check]:
        checks: list[Check] = []
        logins: dict[str, str] = {}
        for field, role in ROLES.items():
            check, login = self.token(field, role)
            checks.append(check)
            if login is not None:
                logins[field] = login
        checks.append(judge_bot_not_owner(self.settings, logins.get("dispatch_token")))
        if "bot_token" in logins:
            checks.append(self.notifications())
        if "agent_token" in logins:
            checks.append(self.writable("agent_token", "TUSK_AGENT_TOKEN", "bot"))
        if "dispatch_token" in logins:
            checks.append(self.writable("dispatch_token", "TUSK_DISPATCH_TOKEN", "owner"))
        reader = next((f for f in ("read_token", "bot_token", "agent_token") if f in logins), None)
        if reader is not None:
            checks.extend(self.allowed_users(reader))
            checks.extend(self.workflows(reader))
        if "agent_token" in logins:
            checks.append(self.labels())
            checks.append(self.stored_secrets())
        return checks

    # -- one check each

    def token(self, field: str, role: TokenRole) -> tuple[Check, str | None]:
        if getattr(self.secrets, field) is None:
            if role.unset_is_fine:
                return Check(role.env, OK, f"not set: {role.unset_is_fine}"), None
            return Check(role.env, FAIL, "not set", f"export {role.env} (the secret's value)"), None
        expected = self.settings.bot if role.secret_of == "bot" else None
        try:
            response = self.gateway_for(field).request("GET", "/user")
        except Unauthorized:
            return Check(
                role.env,
                FAIL,
                "GitHub refused it: mistyped, cut short, expired or revoked",
                "check that the whole token was pasted (classic tokens start with ghp_), "
                "else create a new one",
            ), None
        login = str(response.body.get("login", ""))
        scopes = parse_scopes(response.header("x-oauth-scopes"))
        return judge_token(role, login=login, scopes=scopes, expected_login=expected), login

    def notifications(self) -> Check:
        name = "notifications readable"
        try:
            self.gateway_for("bot_token").request(
                "GET", "/notifications", params={"per_page": 1}, allow_statuses=(304,)
            )
        except (Forbidden, NotFound) as error:
            return Check(
                name,
                FAIL,
                f"TUSK_BOT_TOKEN cannot read them ({error.status})",
                "give the bot's classic token the notifications scope",
            )
        return Check(name, OK, f"{self.settings.bot}'s notifications can be read")

    def writable(self, field: str, env: str, whose: str) -> Check:
        repo = self.settings.control_repo
        name = f"{repo} writable ({env})"
        try:
            body = self.gateway_for(field).get(f"/repos/{repo}")
        except NotFound:
            return Check(
                name,
                FAIL,
                f"{repo} is not visible to {env}",
                f"create {repo}, or give the token's user access to it",
            )
        if not (body.get("permissions") or {}).get("push"):
            fix = (
                f"give {self.settings.bot} write access to {repo} (Settings → Collaborators)"
                if whose == "bot"
                else f"use a token of {repo}'s owner or of a collaborator with write access"
            )
            return Check(name, FAIL, f"{env} may read {repo} but not write to it", fix)
        return Check(name, OK, f"{env} may write to {repo}")

    def allowed_users(self, field: str) -> list[Check]:
        gateway = self.gateway_for(field)
        checks = []
        for login in self.settings.allowed_users:
            try:
                body = gateway.get(f"/users/{login}")
            except NotFound:
                checks.append(
                    Check(
                        f"allowed user {login}",
                        FAIL,
                        "no such GitHub user",
                        f"fix the spelling in allowed_users of {self.config_name}",
                    )
                )
                continue
            kind = body.get("type", "User")
            if kind != "User" and not self.settings.allow_bot_accounts:
                checks.append(
                    Check(
                        f"allowed user {login}",
                        WARN,
                        f"is a {kind} account: its mentions are ignored",
                        f"set allow_bot_accounts: true in {self.config_name} if that is meant",
                    )
                )
                continue
            checks.append(Check(f"allowed user {login}", OK, "exists"))
        return checks

    def labels(self) -> Check:
        repo = self.settings.control_repo
        gateway = self.gateway_for("agent_token")
        wanted = list(dict.fromkeys(self.settings.labels.model_dump().values()))
        name = f"labels in {repo}"
        try:
            have = {label["name"].lower() for label in gateway.paginate(f"/repos/{repo}/labels")}
            created = []
            for label in wanted:
                if label.lower() not in have:
                    gateway.post(f"/repos/{repo}/labels", json={"name": label}, may_repeat=False)
                    created.append(label)
        except (Forbidden, NotFound) as error:
            return Check(
                name,
                FAIL,
                f"TUSK_AGENT_TOKEN cannot create labels ({error.status})",
                f"give {self.settings.bot} write access to {repo}",
            )
        detail = ", ".join(wanted) + (f" (created {', '.join(created)})" if created else "")
        return Check(name, OK, detail)

    def stored_secrets(self) -> Check:
        """The control repository's Actions secrets, by name (GitHub shows no values):
        what the workflows will get, not what is exported here."""
        repo = self.settings.control_repo
        name = f"secrets of {repo}"
        try:
            listing = self.gateway_for("agent_token").paginate(
                f"/repos/{repo}/actions/secrets", item_key="secrets"
            )
            stored = {str(secret["name"]) for secret in listing}
        except (Forbidden, NotFound) as error:
            return Check(
                name,
                WARN,
                f"TUSK_AGENT_TOKEN may not list them ({error.status})",
                f"check Settings → Secrets and variables → Actions of {repo} by hand",
            )
        missing = [secret for secret in STORED_SECRETS if secret not in stored]
        if missing:
            return Check(
                name,
                FAIL,
                f"missing {', '.join(missing)}",
                " && ".join(f"gh secret set {secret} --repo {repo}" for secret in missing),
            )
        return Check(name, OK, ", ".join(STORED_SECRETS) + " stored")

    def workflows(self, field: str) -> list[Check]:
        repo = self.settings.control_repo
        gateway = self.gateway_for(field)
        texts: dict[str, str | None] = {}
        missing = []
        for caller in CALLERS:
            texts[caller] = self.file(gateway, repo, f".github/workflows/{caller}", None)
            if texts[caller] is None:
                missing.append(caller)
        name = f"workflows in {repo}"
        if missing:
            return [
                Check(
                    name,
                    FAIL,
                    f"missing .github/workflows/{', '.join(missing)}",
                    "run `tusk init --apply` (or `tusk init DIR` and push the folder)",
                )
            ]
        calls = caller_calls(texts)
        releases = sorted({f"{tusk}@{ref}" for _, tusk, _, ref in calls})
        if len(releases) != 1:
            return [
                Check(
                    name,
                    FAIL,
                    f"the callers name {len(releases)} Tusk releases ({', '.join(releases)})",
                    "make all three call the same OWNER/REPO@REF",
                )
            ]
        tusk, ref = releases[0].split("@", 1)
        checks = [Check(name, OK, f"{', '.join(CALLERS)} call {releases[0]}")]
        checks.append(self.last_poll(gateway, texts["poll.yml"]))
        workflows = sorted({workflow for _, _, workflow, _ in calls})
        missing = [
            w for w in workflows if self.file(gateway, tusk, f".github/workflows/{w}", ref) is None
        ]
        checks += [Check(releases[0], OK, f"{w} resolves") for w in workflows if w not in missing]
        if missing:
            checks.append(
                Check(
                    releases[0],
                    FAIL,
                    f"no {', '.join(missing)} at {ref} (no such ref, or not readable)",
                    f"call {RELEASE}, the release this tusk is (`tusk init DIR --force` "
                    "writes callers of it), or another tag or commit of a public Tusk repository",
                )
            )
        return checks

    def last_poll(self, gateway: Gateway, poll_text: str | None) -> Check:
        """The poll workflow's newest run (GitHub lists runs newest first)."""
        repo = self.settings.control_repo
        try:
            body = gateway.get(
                f"/repos/{repo}/actions/workflows/poll.yml/runs", params={"per_page": 1}
            )
        except (NotFound, Forbidden) as error:
            return Check(
                "last poll", WARN, f"the runs of poll.yml are not readable ({error.status})"
            )
        runs = body.get("workflow_runs") if isinstance(body, dict) else None
        created = (runs[0] or {}).get("created_at") if runs else None
        last = datetime.fromisoformat(str(created).replace("Z", "+00:00")) if created else None
        now = gateway.server_time or datetime.now(UTC)
        return judge_last_poll(poll_text, last, now)

    @staticmethod
    def file(gateway: Gateway, repo: str, path: str, ref: str | None) -> str | None:
        params = {"ref": ref} if ref else None
        try:
            body = gateway.get(f"/repos/{repo}/contents/{path}", params=params)
        except (NotFound, Forbidden):
            return None
        if not isinstance(body, dict) or body.get("type") != "file":
            return None
        return base64.b64decode(body.get("content") or "").decode("utf-8", errors="replace")


def report(checks: Iterable[Check]) -> tuple[list[str], int]:
    """The lines to print and the exit code (1 when any check failed)."""
    checks = list(checks)
    failed = sum(1 for check in checks if check.status == FAIL)
    warned = sum(1 for check in checks if check.status == WARN)
    lines = [check.line() for check in checks]
    verdict = "all good" if not failed else f"{failed} problem(s) to fix"
    lines.append(
        f"\n{len(checks)} check(s): {verdict}" + (f", {warned} warning(s)" if warned else "")
    )
    return lines, 1 if failed else 0


# --------------------------------------------------------------------------- CLI


def add_arguments(parser: argparse.ArgumentParser) -> None:
    deployed.add_arguments(parser)


def run(args: argparse.Namespace) -> int:
    secrets = load_secrets()
    settings, source = deployed.settings_for(args, secrets)
    gateways: dict[str, Gateway] = {}

    def gateway_for(field: str) -> Gateway:
        if field not in gateways:
            gateways[field] = Gateway(
                api_url=secrets.github_api_url,
                token=getattr(secrets, field),
                token_name=field.removesuffix("_token"),
                max_attempts=2,
            )
        return gateways[field]

    try:
        checks = Doctor(settings, secrets, gateway_for, source).run_checks()
    finally:
        for gateway in gateways.values():
            gateway.close()
    lines, code = report(checks)
    for line in lines:
        print(line)
    return code
