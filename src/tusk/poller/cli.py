"""``tusk poll``: poll the bot's notifications and dispatch what they carry.

``--once`` runs one cycle (a scheduled workflow); ``--loop`` keeps polling on
any host, waiting ``X-Poll-Interval`` between cycles (or ``--interval`` if
GitHub asks for less often) and stopping cleanly on SIGTERM or SIGINT: the
cycle in progress finishes, nothing is cut in half. ``--state FILE`` keeps the
conditional state (``Last-Modified``, ``X-Poll-Interval``) between runs, so
an idle scheduled poll is a free 304 (``state_file``).
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from tusk import actions_edge
from tusk.contracts.config import load_secrets, load_settings, resolve_config_path
from tusk.contracts.ranges import float_in
from tusk.github.gateway import gateway_from_secrets
from tusk.issues.state import StateStore
from tusk.poller import state_file
from tusk.poller.core import PollState
from tusk.poller.cycle import CycleReport, Poller

log = logging.getLogger("tusk.poller")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--once", action="store_true", help="run one poll cycle and exit")
    mode.add_argument("--loop", action="store_true", help="poll until SIGTERM")
    parser.add_argument("--config", help="tusk.yml (default: $TUSK_CONFIG, then ./tusk.yml)")
    parser.add_argument(
        "--interval",
        type=float_in(1.0, 86400.0),
        default=60.0,
        help="least seconds between polls in --loop (GitHub's X-Poll-Interval wins if longer)",
    )
    parser.add_argument(
        "--state",
        type=Path,
        default=Path(os.environ["TUSK_POLL_STATE"]) if os.environ.get("TUSK_POLL_STATE") else None,
        help="JSON file keeping Last-Modified and the poll interval between runs, so an idle "
        "poll costs no rate limit (default: $TUSK_POLL_STATE, else none)",
    )


def build_poller(config: str | None) -> Poller:
    settings = load_settings(resolve_config_path(config))
    secrets = load_secrets()
    secrets.require("bot_token", "dispatch_token")  # every missing one named at once
    bot = gateway_from_secrets(secrets, "bot")
    dispatcher = gateway_from_secrets(secrets, "dispatch")
    store = StateStore(bot, settings)
    return Poller(
        settings=settings, bot=bot, dispatcher=dispatcher, read_blocklist=store.read_blocklist
    )


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    poller = build_poller(args.config)
    keep = StateKeeper(args.state, bot=poller.settings.bot, api_url=poller.bot.api_url)
    if args.once:
        state, report = poller.cycle(keep.load())
        changed = keep.save(state)
        _print(report)
        if actions_edge.in_actions():  # the poll workflow saves the cache only on a change
            actions_edge.set_outputs({"state-changed": changed})
        return 1 if report.errors else 0
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    loop(poller, stop=stop, least_interval=args.interval, keeper=keep)
    return 0


class StateKeeper:
    """``--state``: where the conditional state lives between runs (nowhere without it)."""

    def __init__(self, path: Path | None, *, bot: str, api_url: str) -> None:
        self.path, self.bot, self.api_url = path, bot, api_url

    def load(self) -> PollState:
        if self.path is None:
            return PollState()
        return state_file.load(self.path, bot=self.bot, api_url=self.api_url)

    def save(self, state: PollState) -> bool:
        if self.path is None:
            return False
        return state_file.save(self.path, state, bot=self.bot, api_url=self.api_url)


def loop(
    poller: Poller,
    *,
    stop: threading.Event,
    least_interval: float = 60.0,
    on_report: Callable[[CycleReport], None] | None = None,
    max_cycles: int | None = None,
    keeper: StateKeeper | None = None,
) -> PollState:
    """Poll until ``stop`` is set, waiting between cycles as GitHub asks."""
    state = keeper.load() if keeper else PollState()
    cycles = 0
    while not stop.is_set():
        try:
            state, report = poller.cycle(state)
            if keeper:
                keeper.save(state)
        except (
            Exception
        ):  # a long-running poller survives one bad cycle; the log keeps the traceback
            log.exception("poll cycle failed; retrying after the interval")
            state = PollState(poll_interval=state.poll_interval, swept_since=state.swept_since)
            report = CycleReport(errors=["the cycle failed (traceback above)"])
        (on_report or _print)(report)
        cycles += 1
        if max_cycles is not None and cycles >= max_cycles:
            break
        stop.wait(max(state.poll_interval, least_interval))
    return state


def _print(report: CycleReport) -> None:
    for line in report.lines():
        print(line, flush=True)
    if report.status != 304 and (report.dispatched or report.commands or report.errors):
        summary = "\n".join(f"- {line}" for line in report.lines())
        actions_edge.append_summary(f"### tusk poll\n\n{summary}\n")
    for error in report.errors:
        actions_edge.warning("tusk poll: a thread was left unread", detail=error)
    sys.stdout.flush()
