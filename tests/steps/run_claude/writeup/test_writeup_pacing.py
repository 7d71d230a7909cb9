"""A long run's write-up is many comments in a row: posted under GitHub's content-creation
limit (the local GitHub enforces it by default), none refused, none twice."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from test_writeup_github import BOT, CONTROL, JOBID, OK, run_dir, scenario, write_up

from tusk.steps.run_claude.proxy.exchanges import RECORD_FILE
from tusk.steps.run_claude.writeup import publish as writeup


def long_events(folder: Path, count: int) -> None:
    """``count`` assistant turns of 19,000 characters that do not compress or repeat."""
    lines = []
    for i in range(count):
        text = "".join(hashlib.sha256(f"{i}-{j}".encode()).hexdigest() for j in range(300))
        turn = {"type": "exchange", "results": [], "answer": [{"type": "text", "text": text}]}
        lines.append(json.dumps(turn) + "\n")
    (folder / RECORD_FILE).write_text("".join(lines))


def test_a_long_transcript_is_posted_paced_under_the_content_limit(
    local_github: Any, tmp_path: Path
) -> None:
    local_github.load(scenario())
    folder = run_dir(tmp_path, local_github, OK)
    long_events(folder, 300)  # about 5.7 million characters: some 90 comments
    _, report = write_up(local_github, folder)
    assert report.complete
    comments = local_github.gateway("alice").paginate(f"/repos/{CONTROL}/issues/1/comments")
    parts = [writeup.part_of(c, jobid=JOBID, bot=BOT) for c in comments]
    assert len(parts) > 80 and len(parts) == len(set(parts))  # over a minute's limit, once each
    statuses = [e["status"] for e in local_github.journal() if e["method"] == "POST"]
    assert set(statuses) == {201}  # paced: GitHub never had to refuse one
    assert sum(local_github.sleeps) >= (len(parts) - 20) * 1.2 - 1
