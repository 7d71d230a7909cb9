"""Supervisor throughput: events per second through the live watch (loop detection
on, every tool call paired with its result), and the time to render a
5,000-event stream as the transcript comments.

    python bench/bench_supervisor.py [--events N]

Prints figures only; the goal is over 50,000 events per second.
"""

from __future__ import annotations

import argparse
import json
import time

from tusk.steps.run_claude.session.watch import StreamWatch
from tusk.steps.run_claude.writeup.summary import clean, render_transcript
from tusk.steps.run_claude.writeup.transcript import read_events, split_comments

GOAL_EVENTS_PER_SECOND = 50_000


def stream(pairs: int) -> list[str]:
    """A realistic mix: MCP reads with JSON results, Bash calls, text, list results."""
    lines = [
        json.dumps(
            {
                "type": "system",
                "subtype": "init",
                "session_id": "bench",
                "tools": ["Bash", "mcp__github__get_issue"],
                "mcp_servers": [{"name": "github", "status": "connected"}],
            }
        )
    ]
    for index in range(pairs):
        if index % 3 == 0:
            name, arguments = "mcp__github__get_issue", {"repo": "alice/widgets", "number": index}
            content: object = json.dumps({"issue": {"number": index, "body": "x" * 400}})
        elif index % 3 == 1:
            name, arguments = "Bash", {"command": f"grep -n widget file{index}.py"}
            content = [{"type": "text", "text": f"{index}: def widget() -> str" * 8}]
        else:
            name, arguments = "Read", {"file_path": f"/w/src/module{index}.py"}
            content = "line\n" * 60
        lines.append(
            json.dumps(
                {
                    "type": "assistant",
                    "message": {
                        "id": f"msg_{index}",
                        "content": [
                            {
                                "type": "tool_use",
                                "id": f"toolu_{index}",
                                "name": name,
                                "input": arguments,
                            }
                        ],
                    },
                    "session_id": "bench",
                }
            )
        )
        lines.append(
            json.dumps(
                {
                    "type": "user",
                    "message": {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": f"toolu_{index}",
                                "content": content,
                            }
                        ],
                    },
                    "session_id": "bench",
                }
            )
        )
    lines.append(
        json.dumps(
            {
                "type": "result",
                "subtype": "success",
                "is_error": False,
                "num_turns": pairs,
                "result": "done",
                "session_id": "bench",
            }
        )
    )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=200_000)
    args = parser.parse_args()

    lines = stream(args.events // 2)
    average = sum(len(line) for line in lines) / len(lines)
    best = float("inf")
    for _ in range(3):
        watch = StreamWatch(loop_threshold=6)
        started = time.perf_counter()
        for line in lines:
            watch.feed(line)
        best = min(best, time.perf_counter() - started)
        assert watch.stop is None and watch.tool_calls == args.events // 2
    rate = len(lines) / best
    print(f"watch: {len(lines):,} events (avg {average:.0f} bytes) in {best:.3f} s")
    print(
        f"watch: {rate:,.0f} events/s with loop detection on "
        f"({rate / GOAL_EVENTS_PER_SECOND:.2f}x the goal of {GOAL_EVENTS_PER_SECOND:,})"
    )

    events = read_events(stream(2_500)[:5_000])
    started = time.perf_counter()
    markdown = render_transcript("bench", events)
    rendered = time.perf_counter() - started
    started = time.perf_counter()
    parts = split_comments(clean(markdown, ["sk-bench-secret-value"]))
    cleaned = time.perf_counter() - started
    print(
        f"transcript: {len(events):,} events → {len(markdown):,} chars in {rendered:.3f} s; "
        f"redact + split into {len(parts)} comment(s) in {cleaned:.3f} s "
        f"({(rendered + cleaned) * 1000 / len(events):.3f} ms per event)"
    )


if __name__ == "__main__":
    main()
