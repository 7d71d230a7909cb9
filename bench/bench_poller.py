"""Poller benchmark: API requests per idle poll and per trigger, against the local GitHub.

Prints, for an idle ``--loop`` poll and an idle scheduled ``--once`` poll
(a fresh process each time, with and without ``--state``), the requests sent
(goal: none counted; its conditional requests, the notifications and the log
issues' listing for late follow-ups, answered 304) and, for three large threads,
the requests spent per trigger next to the floor of one GraphQL page per 100
items (goal: the context fetch at most 1.2x the floor):

* an issue with 250 comments;
* a pull request with 120 review comments in 40 reviews and 2 linked issues;
* a discussion with 80 comments and replies.

Requests are split into the context fetch (GraphQL pages, plus the REST
diff and branch protection that GraphQL cannot give), the fixed cost of a
poll (notifications, blocklist, permission and mark-read) and the
dispatches. 304 answers are counted apart: GitHub does not charge them.

Then one busy poll: 200 unread threads, half without a mention of the bot
(the goal: at most 1.5 counted requests of the bot's token per thread):

* 40 threads the bot was mentioned in earlier and read, with a new reply
  that does not mention it (``reason`` stays ``mention``: GitHub keeps it);
* 30 issues the bot opened and 30 it commented on, with a new comment
  (``reason`` ``author`` and ``comment``);
* 30 of the earlier threads with a new mention, 50 issues and 20 pull
  requests the bot is mentioned in for the first time.

Run: ``python bench/bench_poller.py``.
"""

from __future__ import annotations

import math
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from tusk.contracts.config import Limits, Settings
from tusk.github.gateway import Gateway, RequestLedger
from tusk.issues.state import StateStore
from tusk.poller.cli import StateKeeper
from tusk.poller.core import PollState
from tusk.poller.cycle import Poller
from tusk.sandbox.github_server import start_server
from tusk.sandbox.testing import LocalGitHub

BOT = "tusk-bot"
REPO = "alice/widgets"
SETTINGS = Settings(bot=BOT, control_repo="alice/control", allowed_users=("alice",))
MENTION = "@tusk-bot please take a look"


def world(**content: Any) -> dict[str, Any]:
    widgets = {
        "name": REPO,
        "default_branch": "main",
        "collaborators": {"bob": "write", BOT: "write"},
        "branches": [{"name": "main"}],
        "files": {"README.md": "# Widgets\n", "widgets.py": "def widget():\n    return 1\n"},
        **content,
    }
    return {
        "users": [{"login": "alice"}, {"login": "bob"}, {"login": BOT}],
        "tokens": {
            "bot-read": {"user": BOT, "scopes": ["notifications", "repo"], "read_only": True},
            "dispatch": {"user": "alice", "scopes": ["repo"]},
        },
        "repos": [
            widgets,
            {"name": "alice/control", "private": True, "collaborators": {BOT: "write"}},
        ],
    }


def said(index: int, body: str | None = None) -> dict[str, Any]:
    """A comment by alice or bob that does not mention the bot."""
    return {
        "author": "bob" if index % 2 else "alice",
        "body": body or f"comment {index}: " + "words " * 20,
    }


def issue_case() -> tuple[dict[str, Any], int]:
    comments = [said(i) for i in range(249)] + [{"author": "alice", "body": MENTION}]
    issue = {
        "number": 1,
        "author": "alice",
        "title": "Long thread",
        "body": "A bug.",
        "comments": comments,
    }
    return world(issues=[issue]), 250


def pull_case() -> tuple[dict[str, Any], int]:
    linked: list[dict[str, Any]] = [
        {"number": n, "author": "bob", "title": f"Bug {n}", "body": "It breaks.", "comments": []}
        for n in (1, 2)
    ]
    reviews = [
        {
            "author": "bob",
            "body": f"review {r}",
            "state": "COMMENTED",
            "comments": [
                {"author": "bob", "body": f"note {r}.{c}", "path": "widgets.py", "line": 1}
                for c in range(3)
            ],
        }
        for r in range(40)
    ]
    pull = {
        "number": 3,
        "author": "bob",
        "title": "Faster widgets",
        "body": "Fixes #1\nFixes #2",
        "head": "faster",
        "base": "main",
        "files": {"widgets.py": "def widget():\n    return 2\n"},
        "reviews": reviews,
        "comments": [{"author": "alice", "body": MENTION}],
    }
    return world(issues=linked, pulls=[pull]), 120 + 40 + 2 + 1


def discussion_case() -> tuple[dict[str, Any], int]:
    comments = [
        {
            "author": "bob",
            "body": f"idea {i}",
            "replies": [{"author": "alice", "body": f"reply {i}"}],
        }
        for i in range(39)
    ]
    comments.append(
        {"author": "bob", "body": "idea 39", "replies": [{"author": "alice", "body": MENTION}]}
    )
    discussion = {
        "number": 1,
        "author": "alice",
        "title": "Roadmap",
        "body": "What next?",
        "category": "Ideas",
        "comments": comments,
    }
    return world(discussions=[discussion], has_discussions=True), 80


@dataclass
class Measured:
    by_kind: Counter[str]
    not_modified: int
    graphql_pages: int
    dispatched: int


def kind_of(route: str) -> str:
    if (
        route == "POST /graphql"
        or route.endswith("/protection")
        or route.startswith("GET /repos/{owner}/{repo}/pulls/")
    ):
        return "context"
    if route.endswith("/dispatches"):
        return "dispatch"
    if route.endswith("/reactions"):
        return "reaction"  # the 👀 that acknowledges a dispatched mention
    return "poll"


def measure(github: LocalGitHub, scenario: dict[str, Any]) -> Measured:
    github.load(scenario)
    ledger = RequestLedger()
    bot = Gateway(api_url=github.url, token=SecretStr("bot-read"), token_name="bot", ledger=ledger)
    dispatcher = Gateway(
        api_url=github.url, token=SecretStr("dispatch"), token_name="dispatch", ledger=ledger
    )
    poller = Poller(
        settings=SETTINGS,
        bot=bot,
        dispatcher=dispatcher,
        read_blocklist=StateStore(bot, SETTINGS).read_blocklist,
    )
    _, report = poller.cycle(PollState())
    if report.errors or len(report.dispatched) != 1:
        raise SystemExit(f"benchmark run went wrong: {report.lines()}")
    kinds = by_kind(github, ledger, since=0)
    return Measured(
        kinds,
        ledger.total_not_modified,
        ledger.by_route["POST /graphql"] - kinds["reaction via GraphQL"],
        len(report.dispatched),
    )


def by_kind(github: LocalGitHub, ledger: RequestLedger, *, since: int) -> Counter[str]:
    """Counted requests by kind. A reaction on a discussion is a GraphQL mutation: the
    local GitHub's journal (from entry ``since``) tells it from the context's queries."""
    kinds: Counter[str] = Counter()
    for route, count in ledger.by_route.items():
        kinds[kind_of(route)] += count
    mutations = sum(
        1
        for entry in github.journal()[since:]
        if entry["path"] == "/graphql"
        and entry["token"] == "bot-read"
        and str((entry["body"] or {}).get("query", "")).lstrip().startswith("mutation")
    )
    kinds["context"] -= mutations
    kinds["reaction"] += mutations
    kinds["reaction via GraphQL"] = mutations
    return kinds


def idle(github: LocalGitHub) -> tuple[int, int]:
    scenario, _ = issue_case()
    github.load(scenario)
    ledger = RequestLedger()
    bot = Gateway(api_url=github.url, token=SecretStr("bot-read"), token_name="bot", ledger=ledger)
    dispatcher = Gateway(api_url=github.url, token=SecretStr("dispatch"), token_name="dispatch")
    poller = Poller(
        settings=SETTINGS,
        bot=bot,
        dispatcher=dispatcher,
        read_blocklist=StateStore(bot, SETTINGS).read_blocklist,
    )
    state, _ = poller.cycle(PollState())  # the mention
    state = settle(poller, state, ledger)
    ledger.reset()
    poller.cycle(state)  # idle
    return ledger.total, ledger.total_not_modified


def settle(poller: Poller, state: PollState, ledger: RequestLedger) -> PollState:
    """Poll until a poll writes nothing. A thread updated in the second GitHub listed it
    is looked at once more, and each mark-read changes the notifications' Last-Modified,
    so the poll after a busy one may still answer 200; the idle poll is the one after."""
    for _ in range(5):
        ledger.reset()
        state, _ = poller.cycle(state)
        if not any(route.startswith(("PUT", "POST", "PATCH")) for route in ledger.by_route):
            return state
    raise SystemExit("benchmark run went wrong: the poller never settled into an idle poll")


def idle_scheduled(github: LocalGitHub, *, keep_state: bool, folder: Path) -> tuple[int, int]:
    """Three scheduled ``--once`` runs (each a new poller), then an idle fourth, measured."""
    scenario, _ = issue_case()
    github.load(scenario)
    state_path = folder / f"poll-state-{keep_state}.json"
    keeper = StateKeeper(state_path if keep_state else None, bot=SETTINGS.bot, api_url=github.url)
    ledger = RequestLedger()
    for run in range(5):
        if run == 4:
            ledger.reset()  # runs 1-4: the mention, the bot's own mark-reads, a settled poll
        bot = Gateway(
            api_url=github.url, token=SecretStr("bot-read"), token_name="bot", ledger=ledger
        )
        dispatcher = Gateway(api_url=github.url, token=SecretStr("dispatch"), token_name="dispatch")
        poller = Poller(
            settings=SETTINGS,
            bot=bot,
            dispatcher=dispatcher,
            read_blocklist=StateStore(bot, SETTINGS).read_blocklist,
        )
        state, _ = poller.cycle(keeper.load())
        keeper.save(state)
    return ledger.total, ledger.total_not_modified


# --------------------------------------------------------------------------- one busy poll

STICKY, REMENTION, AUTHORED, COMMENTED, FRESH, PULLS = 40, 30, 30, 30, 50, 20
# bob may write to widgets: his mentions cost a permission request, alice's (the owner's) none.
# The limits across runs are lifted: a hundred runs in flight for two people are over them
# by design, and the figure here is requests per thread, not the limits' verdict.
BUSY_SETTINGS = Settings(
    bot=BOT,
    control_repo="alice/control",
    allowed_users=("alice", "bob"),
    limits=Limits(
        daily_budget_usd=None,
        runs_per_requester=None,
        requester_budget_usd=None,
        runs_per_repository=None,
    ),
)


def busy_world() -> tuple[dict[str, Any], dict[str, list[int]]]:
    """Threads for the busy poll; the numbers of each group."""
    groups: dict[str, list[int]] = {}
    issues: list[dict[str, Any]] = []
    number = 0

    def add(group: str, count: int, make: Any) -> None:
        nonlocal number
        for _ in range(count):
            number += 1
            groups.setdefault(group, []).append(number)
            issues.append({"number": number, "title": f"{group} {number}", **make()})

    mention_earlier = lambda: {  # noqa: E731
        "author": "alice",
        "body": "A bug.",
        "comments": [said(1), {"author": "alice", "body": MENTION}],
    }
    add("sticky", STICKY, mention_earlier)
    add("rementioned", REMENTION, mention_earlier)
    add("authored", AUTHORED, lambda: {"author": BOT, "body": "Found while working."})
    add(
        "commented",
        COMMENTED,
        lambda: {
            "author": "alice",
            "body": "A bug.",
            "comments": [{"author": BOT, "body": "On it."}],
        },
    )
    add("fresh", FRESH, lambda: {"author": "alice", "body": "A bug.", "comments": [said(2)]})
    pulls = []
    for _ in range(PULLS):
        number += 1
        groups.setdefault("pulls", []).append(number)
        pulls.append(
            {
                "number": number,
                "author": "bob",
                "title": f"Change {number}",
                "body": "Faster widgets.",
                "head": f"change-{number}",
                "base": "main",
                "files": {"widgets.py": f"def widget():\n    return {number}\n"},
            }
        )
    scenario = world(issues=issues, pulls=pulls)
    for token in ("alice", "bob"):
        scenario["tokens"][token] = {"user": token, "scopes": ["repo"]}
    return scenario, groups


def busy(github: LocalGitHub) -> tuple[Counter[str], int, int, int]:
    """(counted requests of the bot's token by kind, 304s, threads, dispatched jobs)."""
    scenario, groups = busy_world()
    github.load(scenario)
    ledger = RequestLedger()
    bot = Gateway(api_url=github.url, token=SecretStr("bot-read"), token_name="bot", ledger=ledger)
    dispatcher = Gateway(api_url=github.url, token=SecretStr("dispatch"), token_name="dispatch")
    poller = Poller(
        settings=BUSY_SETTINGS,
        bot=bot,
        dispatcher=dispatcher,
        read_blocklist=StateStore(bot, BUSY_SETTINGS).read_blocklist,
    )
    state, _ = poller.cycle(PollState())  # the earlier mentions, read
    people = {
        login: Gateway(api_url=github.url, token=SecretStr(login), token_name=login)
        for login in ("alice", "bob")
    }

    def comment(number: int, author: str, body: str) -> None:
        people[author].request(
            "POST", f"/repos/{REPO}/issues/{number}/comments", json={"body": body}
        )

    for index, number in enumerate(groups["sticky"]):
        comment(number, ("alice", "bob")[index % 2], "Thanks, that works.")
    for number in groups["authored"]:
        comment(number, "bob", "I can reproduce this.")
    for number in groups["commented"]:
        comment(number, "alice", "Any news?")
    mentioned = groups["rementioned"] + groups["fresh"] + groups["pulls"]
    for index, number in enumerate(mentioned):
        comment(number, ("alice", "bob")[index % 2], f"{MENTION} (round two)")
    ledger.reset()
    start = len(github.journal())
    _, report = poller.cycle(state)
    if report.errors or len(report.dispatched) != len(mentioned):
        raise SystemExit(f"benchmark run went wrong: {report.lines()}")
    kinds = by_kind(github, ledger, since=start)
    return kinds, ledger.total_not_modified, report.threads, len(report.dispatched)


def main() -> None:
    server = start_server(port=0, strict=True)
    github = LocalGitHub(server.url, server.app.admin_secret)
    try:
        counted, free = idle(github)
        print("idle --loop poll")
        print(
            f"  requests counted: {counted}   answered 304 (free): {free}   goal: 0 counted, 2 free"
        )
        with tempfile.TemporaryDirectory() as folder:
            for keep in (False, True):
                counted, free = idle_scheduled(github, keep_state=keep, folder=Path(folder))
                label = "with --state" if keep else "without state"
                print(f"idle scheduled --once poll, {label}")
                print(f"  requests counted: {counted}   answered 304 (free): {free}")
        print()
        columns = ("items", "floor", "gql", "context", "ratio", "poll", "disp", "304", "total")
        header = f"{'trigger':<44}" + "".join(f"{name:>8}" for name in columns)
        print(header)
        print("-" * len(header))
        for label, build in (
            ("issue, 250 comments", issue_case),
            ("PR, 120 review comments/40 reviews/2 linked", pull_case),
            ("discussion, 80 comments and replies", discussion_case),
        ):
            scenario, items = build()
            got = measure(github, scenario)
            floor = max(1, math.ceil(items / 100))
            context = got.by_kind["context"]
            total = sum(got.by_kind[k] for k in ("context", "poll", "reaction", "dispatch"))
            cells = (
                items,
                floor,
                got.graphql_pages,
                context,
                f"{context / floor:.2f}x",
                got.by_kind["poll"] + got.by_kind["reaction"],
                got.by_kind["dispatch"],
                got.not_modified,
                total,
            )
            print(f"{label:<44}" + "".join(f"{cell:>8}" for cell in cells))
        print()
        print(
            "floor: one GraphQL page per 100 items; context: GraphQL pages + REST diff/protection;"
        )
        print("ratio: context / floor (goal <= 1.2x); poll: notifications, blocklist, permission,")
        print("mark-read and the 👀 on the mention; disp: repository_dispatch shards; 304s apart.")
        print()
        kinds, free, threads, jobs = busy(github)
        counted = sum(kinds[kind] for kind in ("context", "poll", "reaction"))
        print(f"busy poll: {threads} unread threads, {jobs} with a new mention (dispatched)")
        print(
            f"  bot token, counted: {counted} ({kinds['context']} context, {kinds['poll']} "
            f"notifications/blocklist/permission/mark-read, {kinds['reaction']} 👀)   304: {free}"
        )
        print(f"  counted requests per unread thread: {counted / threads:.2f}   goal: <= 1.5")
        print("  (context: GraphQL looks and full contexts + REST diffs; dispatches go with the")
        print("  dispatch token and are not counted here)")
        violations = github.violations()
        if violations:
            raise SystemExit(f"the local GitHub recorded {len(violations)} spec violation(s)")
    finally:
        github.close()
        server.stop()


if __name__ == "__main__":
    main()
