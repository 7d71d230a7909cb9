"""What resuming a thread's conversation adds to the model's input (MISSION C3).

A resumed run's earlier turns are put before its own by the model proxy in every
request of its conversation. This builds the conversation records of typical
earlier runs (a task, a dozen tool calls with their results, an answer) from
proxy records, sends the same Claude Code-sized first request through a real
model proxy to the scripted model with and without them, and prints the extra
input per request and over a run, in bytes and estimated tokens, against a fresh
run's request.

    python bench/bench_resume.py [--requests-per-run N] [--fresh-bytes B]

Prints figures only. ``--fresh-bytes``: the size of Claude Code's first request of
a fresh run (system prompt, tools, the run's prompt); 33,000 is what the pinned
Claude Code sends in the end-to-end tests (33 KB: about 29 KB of system prompt
and tools, 4 KB of messages). Tokens are estimated at 4 characters each (the
usual figure for English and JSON; the proxy's own budget estimate is 2, to err
on the safe side).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import requests
from pydantic import SecretStr

from tusk.contracts.config import Limits
from tusk.issues.log_issue import LogIssue
from tusk.sandbox.model_server import ModelServer
from tusk.steps.run_claude.proxy import conversation
from tusk.steps.run_claude.proxy.metering import Meter
from tusk.steps.run_claude.proxy.prior import PriorTurns
from tusk.steps.run_claude.proxy.proxy import Credentials, ModelProxy
from tusk.steps.run_claude.resume import earlier_turns

CHARS_PER_TOKEN = 4
ANCHOR = "You are Tusk's agent. Someone mentioned the bot on GitHub and asked for the task below."


def typical_run(index: int) -> list[str]:
    """A proxy record of a typical run: read the issue, look at files, run tests, comment."""
    entries: list[dict[str, Any]] = [
        {"type": "task", "text": f"> @tusk-bot please fix the resize bug, take {index}\n" * 3},
        {"type": "pass", "name": "Main session", "prompt": ANCHOR + "\n\n# Task ..."},
    ]
    calls = [
        ("mcp__github__get_issue", {"repo": "alice/widgets", "number": 7}, "x" * 2400),
        ("Grep", {"pattern": "def resize", "path": "src"}, "src/widgets/resize.py:12\n" * 10),
        ("Read", {"file_path": "src/widgets/resize.py"}, "def resize(w, h):\n    ...\n" * 80),
        ("Bash", {"command": "python -m pytest -q tests/test_resize.py"}, "." * 300 + " passed"),
    ] * 3
    for name, arguments, result in calls:
        entries.append(
            {
                "type": "exchange",
                "results": [],
                "answer": [
                    {"type": "text", "text": "Let me look at that."},
                    {"type": "tool_use", "name": name, "input": arguments},
                ],
            }
        )
        entries.append(
            {
                "type": "exchange",
                "results": [{"type": "tool_result", "content": result}],
                "answer": [],
            }
        )
    answer = "I fixed the resize bug: the width was rounded twice. " * 12
    entries.append(
        {"type": "exchange", "results": [], "answer": [{"type": "text", "text": answer}]}
    )
    return [json.dumps(entry) + "\n" for entry in entries]


def fresh_body(size: int) -> dict[str, Any]:
    """A first request of Claude Code's shape and size: system, tools, the run's prompt."""
    prompt = ANCHOR + "\n\n# Task\n\n> @tusk-bot now the docs too\n\n# Context\n\n" + "c" * 3000
    body: dict[str, Any] = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 32000,
        "stream": True,
        "system": [{"type": "text", "text": ""}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": prompt}]}],
    }
    room = size - len(json.dumps(body))
    body["system"][0]["text"] = "s" * max(room, 0)
    return body


def sent_bytes(prior: PriorTurns | None, body: dict[str, Any]) -> int:
    """The bytes the scripted model received for ``body`` sent through a real proxy."""
    script = {"steps": [{"text": "ok"}]}
    with ModelServer(script) as model:
        credentials = Credentials(api_key=SecretStr("sk-bench"))
        meter = Meter(budget_usd=1_000)
        with ModelProxy(
            upstream=model.url, credentials=credentials, meter=meter, prior=prior
        ) as proxy:
            session = requests.Session()
            session.trust_env = False
            response = session.post(
                f"{proxy.url}/v1/messages",
                json=body,
                headers={"x-api-key": proxy.client_key},
                timeout=30,
            )
            response.raise_for_status()
        [entry] = model.journal()
    return len(json.dumps(entry["request"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests-per-run", type=int, default=20)
    parser.add_argument("--fresh-bytes", type=int, default=33_000)
    args = parser.parse_args()
    body = fresh_body(args.fresh_bytes)
    fresh = sent_bytes(None, body)
    chars = Limits().resume_chars
    print(f"fresh first request: {fresh:,} bytes ≈ {fresh // CHARS_PER_TOKEN:,} tokens")
    print(f"limits.resume_chars: {chars:,} characters ≈ {chars // CHARS_PER_TOKEN:,} tokens")
    print()
    print("earlier runs | record (gzip+b64) | extra per request | extra over a run | of fresh")
    for runs in (1, 2, 3, 5):
        records = []
        for index in range(1, runs + 1):
            record = conversation.from_record(typical_run(index), jobid=f"job-{index}")
            assert record is not None
            issue = LogIssue(index, "", "", "closed", None, f"job-{index}", "a/w", False, None)
            records.append((issue, conversation.fitted(record)))
        turns, left_out = earlier_turns(records, chars=chars)
        resumed = sent_bytes(PriorTurns(turns, anchor=ANCHOR), body)
        extra = resumed - fresh
        stored = len(conversation.encode(records[0][1]))
        tokens = extra // CHARS_PER_TOKEN
        note = f" ({left_out} left out)" if left_out else ""
        print(
            f"{runs:>12}{note} | {stored:>11,} chars | {extra:>8,} B ≈ {tokens:>6,} tok"
            f" | {tokens * args.requests_per_run:>9,} tok | {resumed / fresh - 1:>7.0%}"
        )
    print()
    print(
        f"(a run of {args.requests_per_run} requests; the earlier turns sit before Claude "
        "Code's cache breakpoints, so after the first request they are cache reads, billed "
        "at a tenth of the input price)"
    )


if __name__ == "__main__":
    main()
