"""build-context benchmark: time and peak memory against merely parsing the same JSON.

The input is made the way the poller makes it: GitHub's GraphQL nodes for a
pull request (the fields ``poller.context`` selects) are laid out by the
poller's own ``raw_shape.to_raw``, the mention is found by ``core.nodes_of``
and ``locate_triggers``, planned by ``core.plan`` and written by
``dispatch.build_document``, the document merge-shards hands to build-context.
At 1x the pull request has 5,000 issue comments (one of them 38,000
characters) and a 5 MB diff; 2x, 4x and 8x scale both.

The pipeline is what ``tusk build-context`` does minus the GitHub calls:
validate the document, build, render task.md and context.md, fit the log
issue body. For each size it prints the median CPU time of ``--repeat`` runs
of the pipeline and of ``json.loads`` on the same bytes, the median of their
run-by-run ratios (goal: under 2x at every size), the pipeline's time per MB
relative to 1x (linear growth keeps it near 1), and the peak traced memory
of both.

Run: ``python bench/bench_build_context.py [--scales 1,2,4,8] [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import time
import tracemalloc
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from tusk.contracts.config import Settings
from tusk.contracts.models import Blocklist, ContextDocument, TaskWork
from tusk.github import trust
from tusk.poller.core import locate_triggers, nodes_of, plan
from tusk.poller.dispatch import build_document
from tusk.poller.raw_shape import to_raw
from tusk.steps.build_context import build_context as bc
from tusk.steps.build_context import log_body as lb

BOT = "tusk-bot"
REPO = "alice/widgets"
SETTINGS = Settings(bot=BOT, control_repo="alice/tusk-control", allowed_users=("alice",))
COMMENTS_AT_1X = 5000
DIFF_AT_1X = 5 * 1024 * 1024
HUGE_COMMENT = 38_000
WORDS = [
    "the",
    "fix",
    "typo",
    "readme",
    "widget",
    "please",
    "review",
    "merge",
    "branch",
    "main",
    "test",
    "failing",
    "error",
    "stack",
    "trace",
    "python",
    "function",
    "class",
    "module",
    "import",
    "install",
    "config",
    "docs",
    "update",
]
AUTHORS = (("alice", "OWNER"), ("bob", "CONTRIBUTOR"), ("mallory", "NONE"))
T0 = datetime(2026, 1, 1, tzinfo=UTC)
MENTION = f"@{BOT} please fix the failing test"


def text(rng: random.Random, chars: int) -> str:
    out, total = [], 0
    while total < chars:
        word = rng.choice(WORDS)
        out.append(word)
        total += len(word) + 1
        if rng.random() < 0.02:
            out.append("\n")
    return " ".join(out)[:chars]


def stamp(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def graphql_comment(index: int, body: str, login: str, association: str) -> dict[str, Any]:
    """An issue comment as GitHub's GraphQL returns the fields ``poller.context`` selects."""
    moment = stamp(T0 + timedelta(minutes=index))
    return {
        "id": f"IC_kwDO{index:08d}",
        "databaseId": 1_000_000 + index,
        "url": f"https://github.com/{REPO}/pull/1#issuecomment-{1_000_000 + index}",
        "body": body,
        "createdAt": moment,
        "updatedAt": moment,
        "author": {"__typename": "User", "login": login},
        "authorAssociation": association,
    }


def graphql_pull(comments: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "__typename": "PullRequest",
        "id": "PR_kwDO00000001",
        "number": 1,
        "title": "Faster widgets",
        "body": "This makes widgets faster.",
        "url": f"https://github.com/{REPO}/pull/1",
        "state": "OPEN",
        "createdAt": stamp(T0),
        "updatedAt": stamp(T0),
        "lastEditedAt": None,
        "closedAt": None,
        "author": {"__typename": "User", "login": "alice"},
        "authorAssociation": "OWNER",
        "milestone": None,
        "isDraft": False,
        "merged": False,
        "mergedAt": None,
        "mergeable": "MERGEABLE",
        "headRefName": "faster",
        "headRefOid": "1" * 40,
        "baseRefName": "main",
        "baseRefOid": "2" * 40,
        "headRepository": {"nameWithOwner": REPO},
        "baseRepository": {"nameWithOwner": REPO},
        "labels": [{"name": "enhancement"}],
        "assignees": [{"login": "alice"}],
        "comments": comments,
        "reviews": [],
        "closingIssuesReferences": [],
    }


def make_document(scale: int, seed: int = 1) -> bytes:
    """The context document the poller would dispatch for the mention at the end."""
    rng = random.Random(seed)
    count = COMMENTS_AT_1X * scale
    comments = []
    for index in range(count):
        size = HUGE_COMMENT if index == count // 2 else rng.randint(50, 800)
        login, association = rng.choice(AUTHORS)
        comments.append(graphql_comment(index, text(rng, size), login, association))
    comments.append(graphql_comment(count, MENTION, "alice", "OWNER"))
    diff_line = "+    return widget(size=size, colour=colour)  # " + "x" * 20 + "\n"
    diff = diff_line * (DIFF_AT_1X * scale // len(diff_line))
    repository = {"nameWithOwner": REPO, "defaultBranchRef": {"name": "main"}, "refs": []}
    raw = to_raw(
        kind="pull_request",
        repo=REPO,
        repository=repository,
        thread=graphql_pull(comments),
        fork=None,
        viewer={"login": BOT, "repositories": []},
        diff=diff,
        protection={"branch": "main", "visible": False, "protected": None, "rules": None},
        notes=[],
    )
    since = T0 + timedelta(minutes=count)
    candidates, _ = locate_triggers(nodes_of(raw), since=since, settings=SETTINGS)
    if len(candidates) != 1:
        raise SystemExit(f"expected one mention, the poller found {len(candidates)}")
    work = plan(
        candidates[0],
        repo=REPO,
        trust=trust.from_association(REPO, "alice", "OWNER"),
        settings=SETTINGS,
        blocklist=Blocklist(),
        now=since,
    )
    if not isinstance(work, TaskWork):
        raise SystemExit(f"the poller would not dispatch the mention: {work}")
    return build_document(work, raw).model_dump_json().encode("utf-8")


def pipeline(data: bytes) -> int:
    """``tusk build-context`` minus the GitHub calls (history, memory, the claim)."""
    doc = ContextDocument.model_validate_json(data)
    built = bc.build(doc, SETTINGS)
    task = bc.render_task(built.task)
    context = bc.render_context(built.context)
    log = lb.log_issue_body(
        jobid=doc.jobid,
        repo=doc.repo,
        task_text=built.task.text,
        context_text=context,
        artifact_name="a",
        artifact_url=None,
    )
    return len(task) + len(context) + len(log.body) + len(built.diff or "")


def parse_only(data: bytes) -> int:
    return len(json.loads(data))


def cpu_seconds(run: Callable[[bytes], int], data: bytes) -> float:
    """CPU time of one run: steadier than wall time on a machine shared with others."""
    gc.collect()
    start = time.process_time()
    run(data)
    return time.process_time() - start


def paired(data: bytes, repeat: int) -> tuple[float, float, float]:
    """Medians of ``json.loads``, of the pipeline, and of their ratio run by run.

    Each pipeline run is paired with a parse right before it, so a slow spell of
    the machine moves both sides of one ratio alike."""
    loads, builds, ratios = [], [], []
    for _ in range(repeat):
        parse_s = cpu_seconds(parse_only, data)
        build_s = cpu_seconds(pipeline, data)
        loads.append(parse_s)
        builds.append(build_s)
        ratios.append(build_s / parse_s)
    return statistics.median(loads), statistics.median(builds), statistics.median(ratios)


def peak(run: Callable[[bytes], int], data: bytes) -> int:
    gc.collect()
    tracemalloc.start()
    run(data)
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return top


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scales", default="1,2,4,8", help="comma-separated multiples of 1x")
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure (median)")
    args = parser.parse_args()
    print(
        f"{'scale':>5} {'comments':>8} {'MB':>6} {'loads s':>8} {'build s':>8} {'time x':>7} "
        f"{'s/MB vs 1x':>10} {'loads MB':>9} {'build MB':>9} {'mem x':>6}"
    )
    per_mb_1x = None
    for scale in (int(n) for n in args.scales.split(",")):
        data = make_document(scale)
        megabytes = len(data) / 1e6
        parse_s, build_s, ratio = paired(data, args.repeat)
        parse_m, build_m = peak(parse_only, data), peak(pipeline, data)
        per_mb = build_s / megabytes
        per_mb_1x = per_mb_1x or per_mb
        print(
            f"{scale:>4}x {COMMENTS_AT_1X * scale:>8} {megabytes:>6.1f} {parse_s:>8.3f} "
            f"{build_s:>8.3f} {ratio:>7.2f} {per_mb / per_mb_1x:>10.2f} "
            f"{parse_m / 1e6:>9.1f} {build_m / 1e6:>9.1f} {build_m / parse_m:>6.2f}"
        )
    print()
    print("CPU seconds, medians; time x: build-context / json.loads of the same bytes, the")
    print("median of run-by-run ratios (goal: < 2 at every size); s/MB vs 1x: build time per")
    print("MB against 1x (linear: about 1); memory: peak traced by tracemalloc in one run.")


if __name__ == "__main__":
    main()
