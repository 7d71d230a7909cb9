"""Shard codec benchmark: round trip time and peak memory for 1, 10 and 50 MB contexts.

The round trip is encode, split into 48 KB shards, shuffle, join (validate,
group, sort, checksum) and decode. It is printed as a ratio to plain
``base64(gzip(bytes))`` and back on the same bytes at the same compression
level (goal: at most 1.3x), and its peak traced memory as a multiple of the
context size (goal: at most 3x). Contexts are JSON shaped like real ones
(issues with comments), so they compress as real contexts do.

Run: ``python bench/bench_shards.py [--sizes 1,10,50]``.
"""

from __future__ import annotations

import argparse
import base64
import gc
import gzip
import json
import random
import time
import tracemalloc
from collections.abc import Callable

from tusk.shards import codec as shards

TEXT = (
    "the fix typo readme widget please review merge branch main test failing error "
    "stack trace python function class module import install config docs update "
    "version release issue comment thanks looks good to me"
)
WORDS = TEXT.split(" ")


def make_context(size: int, seed: int = 1) -> bytes:
    """A context-like JSON document of about ``size`` bytes."""
    rng = random.Random(seed)
    comments = []
    total = 0
    while total < size:
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 120)))
        comment = {
            "id": rng.randint(10**8, 10**9),
            "user": {"login": f"user{rng.randint(1, 400)}", "type": "User"},
            "created_at": f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T10:00:00Z",
            "body": body,
            "html_url": f"https://github.com/alice/widgets/issues/1#issuecomment-{total}",
        }
        comments.append(comment)
        total += len(body) + 190
    return json.dumps({"jobid": "bench-job", "raw": {"comments": comments}}).encode()[:size]


def codec_round_trip(data: bytes) -> bytes:
    job_shards = shards.split_into_shards("bench-job", shards.encode_context(data))
    random.Random(0).shuffle(job_shards)
    return shards.join_shards(job_shards)


def plain_round_trip(data: bytes) -> bytes:
    encoded = base64.b64encode(gzip.compress(data, compresslevel=shards.COMPRESS_LEVEL, mtime=0))
    return gzip.decompress(base64.b64decode(encoded))


def best_time(function: Callable[[bytes], bytes], data: bytes, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        result = function(data)
        best = min(best, time.perf_counter() - start)
        assert result == data
        del result
    return best


def peak_memory(function: Callable[[bytes], bytes], data: bytes) -> int:
    gc.collect()
    tracemalloc.start()
    result = function(data)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert result == data
    return peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,10,50", help="context sizes in MB, comma-separated")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"gzip level {shards.COMPRESS_LEVEL}, shard size {shards.DEFAULT_MAX_BYTES} bytes")
    header = (
        f"{'context':>8} {'shards':>7} {'codec s':>8} {'plain s':>8} {'ratio':>6} "
        f"{'peak/size':>9} {'plain peak/size':>15}"
    )
    print(header)
    for megabytes in (int(x) for x in args.sizes.split(",")):
        data = make_context(megabytes * 1024 * 1024)
        count = len(shards.split_into_shards("bench-job", shards.encode_context(data)))
        codec = best_time(codec_round_trip, data, args.repeats)
        plain = best_time(plain_round_trip, data, args.repeats)
        codec_peak = peak_memory(codec_round_trip, data) / len(data)
        plain_peak = peak_memory(plain_round_trip, data) / len(data)
        print(
            f"{megabytes:>6}MB {count:>7} {codec:>8.3f} {plain:>8.3f} {codec / plain:>5.2f}x "
            f"{codec_peak:>8.2f}x {plain_peak:>14.2f}x"
        )
    print("goals: ratio <= 1.3x, peak memory <= 3x the context size")


if __name__ == "__main__":
    main()
