"""build-context benchmark: time and peak memory against merely parsing the same JSON.

The input is made the way the poller makes it: GitHub's GraphQL nodes for a
pull request (the fields ``poller.context`` selects) are laid out by the
poller's own ``raw_shape.to_raw``, the mention is found by ``core.nodes_of``
and ``locate_triggers``, planned by ``core.plan`` and written by
``dispatch.build_document``, the document merge-shards hands to build-context.
At 1x the pull request has 5,000 issue comments (one of them 38,000
characters) and a 5 MB diff; 2x, 4x and 8x scale both.

The pipeline is what ``tusk build-context`` does minus the GitHub calls, by
the step's own functions (``steps.build_context.main``): read the context
file and validate it, build, render task.md, context.md and the step
summary, fit the log issue body, write task.md, context.md, diff.patch and
run.json. For each size it prints the median CPU time of ``--repeat`` runs
of the pipeline and of ``json.loads`` on the same bytes, the median of their
run-by-run ratios (goal: under 2x at every size), the pipeline's time per MB
relative to 1x (linear growth keeps it near 1), its first run in a new
process against ``json.loads`` (a real step runs once per process), and the
peak traced memory of both.

Run: ``python bench/bench_build_context.py [--scales 1,2,4,8] [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tusk.contracts.config import Settings
from tusk.contracts.models import Blocklist, TaskWork
from tusk.github import trust
from tusk.github.once import new_nonce
from tusk.issues.log_issue import LogIssueClaim
from tusk.poller.core import locate_triggers, nodes_of, plan
from tusk.poller.dispatch import build_document
from tusk.poller.raw_shape import to_raw
from tusk.steps.build_context import main as step
from tusk.text import markdown

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
    """``tusk build-context`` minus the GitHub calls (history, memory, the claim): the
    step's own functions read the file, validate, build, render, fit and write.

    The caches of renderings by text are emptied first: the step runs once per
    process, so none of it may come from a run before."""
    markdown.render.cache_clear()
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder, "context.json")
        source.write_bytes(data)
        start = time.process_time()
        with step.collection_paused():  # as ``run`` has it for the whole step
            doc = step.read_context(source)
            prepared = step.prepare(
                doc,
                SETTINGS,
                history=(),
                memory=(),
                artifact_name="tusk-context",
                run_url=None,
                nonce=new_nonce(),
            )
            claim = LogIssueClaim(number=7, url=f"https://github.com/{REPO}/issues/7", won=True)
            step.step_summary(
                doc,
                prepared.built,
                claim,
                prepared.log,
                sizes=prepared.sizes,
                artifact_name="tusk-context",
            )
            with contextlib.redirect_stdout(io.StringIO()):
                step.write_outputs(
                    doc,
                    claim,
                    SETTINGS,
                    out_dir=Path(folder, "out"),
                    context_file=source,
                    task_md=prepared.task_md,
                    context_md=prepared.context_md,
                    diff=prepared.built.diff,
                    full_context=prepared.context_md if prepared.log.context_cut else None,
                    artifact_name="tusk-context",
                )
            spent = time.process_time() - start  # before the collector runs again
    return round(spent * 1e9)


def parse_only(data: bytes) -> int:
    return len(json.loads(data))


def cpu_seconds(run: Callable[[bytes], int], data: bytes) -> float:
    """CPU time of one run: steadier than wall time on a machine shared with others."""
    gc.collect()
    start = time.process_time()
    run(data)
    return time.process_time() - start


def pipeline_seconds(data: bytes) -> float:
    """CPU time of one pipeline run, from reading the file to the last file written
    (the temporary folder's making and removal left out)."""
    gc.collect()
    return pipeline(data) / 1e9


def paired(data: bytes, repeat: int) -> tuple[float, float, float]:
    """Medians of ``json.loads``, of the pipeline, and of their ratio run by run.

    Each pipeline run is paired with a parse right before it, so a slow spell of
    the machine moves both sides of one ratio alike."""
    loads, builds, ratios = [], [], []
    for _ in range(repeat):
        parse_s = cpu_seconds(parse_only, data)
        build_s = pipeline_seconds(data)
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


def first_run(scale: int) -> float:
    """CPU seconds of the pipeline's first run in a new process (its imports done): what
    a run pays once, the templates compiled and the patterns built, included."""
    answer = subprocess.run(
        [sys.executable, __file__, "--first-run", str(scale)],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(answer.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scales", default="1,2,4,8", help="comma-separated multiples of 1x")
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure (median)")
    parser.add_argument("--first-run", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.first_run:
        print(pipeline_seconds(make_document(args.first_run)))
        return
    print(
        f"{'scale':>5} {'comments':>8} {'MB':>6} {'loads s':>8} {'build s':>8} {'time x':>7} "
        f"{'s/MB vs 1x':>10} {'1st run x':>9} {'loads MB':>9} {'build MB':>9} {'mem x':>6}"
    )
    per_mb_1x = None
    for scale in (int(n) for n in args.scales.split(",")):
        data = make_document(scale)
        megabytes = len(data) / 1e6
        parse_s, build_s, ratio = paired(data, args.repeat)
        parse_m, build_m = peak(parse_only, data), peak(pipeline, data)
        first = first_run(scale)
        per_mb = build_s / megabytes
        per_mb_1x = per_mb_1x or per_mb
        print(
            f"{scale:>4}x {COMMENTS_AT_1X * scale:>8} {megabytes:>6.1f} {parse_s:>8.3f} "
            f"{build_s:>8.3f} {ratio:>7.2f} {per_mb / per_mb_1x:>10.2f} {first / parse_s:>9.2f} "
            f"{parse_m / 1e6:>9.1f} {build_m / 1e6:>9.1f} {build_m / parse_m:>6.2f}"
        )
    print()
    print("CPU seconds, medians; time x: build-context / json.loads of the same bytes, the")
    print("median of run-by-run ratios (goal: < 2 at every size); s/MB vs 1x: build time per")
    print("MB against 1x (linear: about 1); 1st run x: the first run in a new process (what")
    print("each real run is: templates compiled, patterns built) against the loads median;")
    print("memory: peak traced by tracemalloc in one run.")


if __name__ == "__main__":
    main()
