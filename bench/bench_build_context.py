"""build-context benchmark: time and peak memory against merely parsing the JSON.

A context document with N issue comments (one of them 38,000 characters) and a
5 MB diff per 5,000 comments is built, rendered (task.md, context.md) and
fitted into a log issue body, exactly as ``tusk build-context`` does minus the
GitHub calls. Both time and peak traced memory are printed as a ratio to
``json.loads`` of the same bytes (goal: under 2x), at two sizes to show that
growth is linear.

Run: ``python bench/bench_build_context.py [--comments 5000,10000]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import time
import tracemalloc
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from tusk.actions.build_context import build_context as bc
from tusk.actions.build_context import log_body as lb

from tusk.config import Settings
from tusk.contracts import ContextDocument, PermissionConfig, Trigger

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
T0 = datetime(2026, 1, 1, tzinfo=UTC)
SETTINGS = Settings(bot="tusk-bot", control_repo="alice/tusk-control", allowed_users=("alice",))


def text(rng: random.Random, chars: int) -> str:
    out, total = [], 0
    while total < chars:
        word = rng.choice(WORDS)
        out.append(word)
        total += len(word) + 1
    return " ".join(out)[:chars]


def make_document(comments: int, seed: int = 1) -> bytes:
    rng = random.Random(seed)
    items: list[dict[str, Any]] = []
    for index in range(comments):
        size = 38_000 if index == comments // 2 else rng.randint(50, 800)
        moment = (T0 + timedelta(minutes=index)).isoformat()
        items.append(
            {
                "id": index + 1,
                "user": {"login": rng.choice(["alice", "bob", "mallory"])},
                "body": text(rng, size),
                "created_at": moment,
                "updated_at": moment,
                "html_url": f"https://github.com/alice/widgets/issues/1#issuecomment-{index + 1}",
                "author_association": rng.choice(["OWNER", "NONE", "CONTRIBUTOR"]),
            }
        )
    diff_line = "+    return widget(size=size, colour=colour)  # " + "x" * 20 + "\n"
    diff = diff_line * (5 * 1024 * 1024 * comments // 5000 // len(diff_line))
    trigger_at = T0 + timedelta(minutes=comments + 1)
    doc = ContextDocument(
        jobid="alice-widgets-bench",
        repo="alice/widgets",
        actor="alice",
        trust_level="owner",
        permission_config=PermissionConfig(),
        trigger=Trigger(
            type="issue_comment",
            id=str(comments + 1),
            url="https://github.com/alice/widgets/pull/1#issuecomment-0",
            number=1,
            author="alice",
            body="@tusk-bot please fix the failing test",
            created_at=trigger_at,
        ),
        raw={
            "issue": {"number": 1, "title": "Bench", "body": "b", "user": {"login": "alice"}},
            "pull_request": {"head": {"ref": "fix"}, "base": {"ref": "main"}},
            "comments": items,
            "diff": diff,
        },
        timestamp=trigger_at,
    )
    return doc.model_dump_json().encode("utf-8")


def pipeline(data: bytes) -> int:
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


def timed(run: Callable[[bytes], int], data: bytes, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        run(data)
        best = min(best, time.perf_counter() - start)
    return best


def peak(run: Callable[[bytes], int], data: bytes) -> int:
    gc.collect()
    tracemalloc.start()
    run(data)
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return top


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--comments", default="5000,10000", help="comma-separated sizes")
    args = parser.parse_args()
    print(
        f"{'comments':>8} {'MB':>6} {'parse s':>8} {'build s':>8} {'time x':>7} "
        f"{'parse MB':>9} {'build MB':>9} {'mem x':>6}"
    )
    for count in (int(n) for n in args.comments.split(",")):
        data = make_document(count)
        parse_s, build_s = timed(parse_only, data), timed(pipeline, data)
        parse_m, build_m = peak(parse_only, data), peak(pipeline, data)
        print(
            f"{count:>8} {len(data) / 1e6:>6.1f} {parse_s:>8.3f} {build_s:>8.3f} "
            f"{build_s / parse_s:>7.2f} {parse_m / 1e6:>9.1f} {build_m / 1e6:>9.1f} "
            f"{build_m / parse_m:>6.2f}"
        )


if __name__ == "__main__":
    main()
