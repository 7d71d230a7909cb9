"""``tusk usage``: where the money goes, from the log issues.

Spend and runs per day, per requester and per repository over the last
``--days`` (7 by default), read from the control repository's log issues the
same way the limits across runs count them (``tusk.issues.usage``), with the
rolling window's standing against each limit (``requester_budget_usd``: the
login that holds the most, its runs in flight at their whole budget). A table for people, ``--json``
for scripts. Reads only; any token of the bot that can read the control
repository does (``TUSK_READ_TOKEN``, else ``TUSK_BOT_TOKEN``).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta

from tusk.cli import deployed
from tusk.contracts.config import Limits, Secrets, load_secrets
from tusk.contracts.limits import RunRecord, held, in_window
from tusk.contracts.pricing import format_usd
from tusk.errors import InputError
from tusk.github.gateway import Gateway, gateway_from_secrets
from tusk.issues.usage import read_runs


@dataclass(frozen=True)
class Row:
    key: str
    runs: int
    spend_usd: float


@dataclass(frozen=True)
class Standing:
    """The rolling window now, against one limit."""

    limit: str
    scope: str
    used: str
    allowed: str


@dataclass(frozen=True)
class Report:
    since: str
    until: str
    runs: int
    spend_usd: float
    by_day: list[Row]
    by_requester: list[Row]
    by_repository: list[Row]
    window: list[Standing]


def rows(records: Iterable[RunRecord], key: Callable[[RunRecord], str]) -> list[Row]:
    """Pure: runs and spend per key, the most expensive first (a day: in order)."""
    runs: dict[str, int] = {}
    spend: dict[str, float] = {}
    for record in records:
        name = key(record)
        runs[name] = runs.get(name, 0) + 1
        spend[name] = spend.get(name, 0.0) + (record.cost_usd or 0.0)
    return [Row(name, runs[name], round(spend[name], 6)) for name in runs]


def standing(records: Sequence[RunRecord], limits: Limits, now: datetime) -> list[Standing]:
    """Pure: the window's spend, and its busiest requester and repository, per limit."""
    window = in_window(records, now=now, hours=limits.usage_window_hours)
    hours = f"last {limits.usage_window_hours:g} h"
    out = [
        Standing(
            "daily_budget_usd",
            f"all runs, {hours}",
            format_usd(sum(r.cost_usd or 0.0 for r in window)),
            "off" if limits.daily_budget_usd is None else format_usd(limits.daily_budget_usd),
        )
    ]
    # requester_budget_usd: the login holding the most, runs in flight at their budget.
    holds: dict[str, float] = {}
    for record in window:
        holds[_requester(record)] = holds.get(_requester(record), 0.0) + held(record)
    top = max(holds.items(), key=lambda item: (item[1], item[0]), default=None)
    cap = limits.requester_budget_usd
    out.append(
        Standing(
            "requester_budget_usd",
            f"{top[0] if top else 'nobody'}, {hours}, runs in flight at their whole budget",
            format_usd(top[1] if top else 0.0),
            "off" if cap is None else f"{format_usd(cap)} per requester",
        )
    )
    for name, allowed, key in (
        ("runs_per_requester", limits.runs_per_requester, _requester),
        ("runs_per_repository", limits.runs_per_repository, _repository),
    ):
        busiest = max(rows(window, key), key=lambda row: row.runs, default=None)
        out.append(
            Standing(
                name,
                f"{busiest.key if busiest else 'nobody'}, {hours}",
                f"{busiest.runs if busiest else 0} run(s)",
                "off" if allowed is None else f"{allowed} run(s)",
            )
        )
    return out


def _requester(record: RunRecord) -> str:
    return record.requester or "?"


def _repository(record: RunRecord) -> str:
    return record.repo or "?"


def _by_spend(found: list[Row]) -> list[Row]:
    return sorted(found, key=lambda row: (-row.spend_usd, -row.runs, row.key))


def report(records: Sequence[RunRecord], limits: Limits, *, now: datetime, days: int) -> Report:
    start = now - timedelta(days=days)
    kept = [r for r in records if start < r.started_at <= now]
    return Report(
        since=start.strftime("%Y-%m-%dT%H:%M:%SZ"),
        until=now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        runs=len(kept),
        spend_usd=round(sum(r.cost_usd or 0.0 for r in kept), 6),
        by_day=sorted(rows(kept, lambda r: r.started_at.strftime("%Y-%m-%d")), key=lambda r: r.key),
        by_requester=_by_spend(rows(kept, _requester)),
        by_repository=_by_spend(rows(kept, _repository)),
        window=standing(records, limits, now),
    )


def table(found: Report) -> str:
    """The report for people: one small table per grouping."""
    lines = [
        f"Tusk usage {found.since} .. {found.until}: {found.runs} run(s), "
        f"{format_usd(found.spend_usd)}"
    ]
    for title, group in (
        ("day", found.by_day),
        ("requester", found.by_requester),
        ("repository", found.by_repository),
    ):
        width = max([len(title), *(len(row.key) for row in group)])
        lines += ["", f"{title.ljust(width)}  {'runs':>5}  {'spend':>9}"]
        lines += [
            f"{row.key.ljust(width)}  {row.runs:>5}  {format_usd(row.spend_usd):>9}"
            for row in group
        ]
        if not group:
            lines.append("(no runs)")
    lines += ["", "limits across runs (the rolling window now):"]
    lines += [f"  {s.limit}: {s.used} of {s.allowed} ({s.scope})" for s in found.window]
    return "\n".join(lines) + "\n"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    deployed.add_arguments(parser)
    parser.add_argument("--days", type=int, default=7, help="how many days back to report")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")


def reader(secrets: Secrets) -> Gateway:
    """The read token, else the bot token (missing both, the error names the latter)."""
    return gateway_from_secrets(secrets, "read" if secrets.read_token is not None else "bot")


def run(args: argparse.Namespace) -> int:
    if args.days < 1:
        raise InputError(f"--days {args.days}: at least one day", "Pass --days 1 or more.")
    secrets = load_secrets()
    settings, _ = deployed.settings_for(args, secrets)
    gateway = reader(secrets)
    try:
        gateway.get(f"/repos/{settings.control_repo}")  # GitHub's clock, and a clear 404
        now = gateway.server_time or datetime.now(UTC)
        hours = max(args.days * 24.0, settings.limits.usage_window_hours)
        records = read_runs(gateway, settings, now=now, hours=hours, with_spend=True)
    finally:
        gateway.close()
    found = report(records, settings.limits, now=now, days=args.days)
    print(
        json.dumps(asdict(found), indent=1) if args.json else table(found),
        end="" if not args.json else "\n",
    )
    return 0
