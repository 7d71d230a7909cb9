"""``tusk demo --variant NAME``: each bot command tried offline, after the demo's run.

One table, ``VARIANTS``: a name, what it shows, what it adds to the demo's tusk.yml,
and what happens once the mention's run is written up. Each posts the maintainer's
command on the demo thread, polls, plays what the poller dispatched through the real
workflows under act (the undo and go-away jobs), prints the thread and the log
issue it leaves as the main demo does, and returns what it expected but did not find.
A new command is one function and one row.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tusk.text.markers import first_marker


@dataclass(frozen=True)
class Stage:
    """The demo's world, as a variant acts on it."""

    gateway: Any  # the maintainer's
    repo: str  # the demo thread's repository (the thread is issue 1)
    bot: str
    control_repo: str
    say: Callable[[str], None]
    poll: Callable[[], None]
    dispatches: Callable[[], list[dict[str, Any]]]
    play: Callable[[dict[str, Any], int], None]

    def comment(self, body: str) -> None:
        """The maintainer says ``body`` on the demo thread."""
        posted = self.gateway.post(f"/repos/{self.repo}/issues/1/comments", json={"body": body})
        self.say(f"\n== The maintainer comments ({posted.body['html_url']})\n{body}")

    def poll_and_play(self, event: str) -> list[dict[str, Any]]:
        """Poll once, then play every ``event`` dispatch it sent; returns them."""
        before = len(self.dispatches())
        self.poll()
        sent = [d for d in self.dispatches()[before:] if d["event_type"] == event]
        for number, dispatch in enumerate(sent, start=before + 1):
            self.play(dispatch, number)
        return sent

    def thread(self) -> list[dict[str, Any]]:
        return list(self.gateway.paginate(f"/repos/{self.repo}/issues/1/comments"))

    def show_thread(self) -> None:
        self.say(f"\n== The thread {self.repo}#1 now")
        for comment in self.thread():
            self.say(f"  @{comment['user']['login']}: {first_line(comment['body'])}")

    def log_issue(self, title_prefix: str) -> dict[str, Any] | None:
        """The newest issue of the control repository whose title starts so."""
        issues = self.gateway.paginate(
            f"/repos/{self.control_repo}/issues", params={"state": "all"}
        )
        found = [i for i in issues if i["title"].startswith(title_prefix)]
        return max(found, key=lambda i: i["number"], default=None)

    def show_log_issue(self, issue: dict[str, Any] | None) -> None:
        if issue is None:
            return
        state = f"{issue['state']}/{issue.get('state_reason') or '-'}"
        self.say(f"\n== The log issue: {issue['title']}\n{issue['html_url']}  [{state}]\n")
        self.say(textwrap.indent(issue.get("body") or "", "    "))
        path = f"/repos/{self.control_repo}/issues/{issue['number']}/comments"
        for comment in self.gateway.paginate(path):
            self.say(f"  comment {comment['html_url']}: {first_line(comment['body'])}")


def first_line(body: str | None) -> str:
    """The first line people see: hidden markers skipped."""
    lines = [line for line in (body or "").strip().splitlines() if line.strip()]
    shown = [line for line in lines if not line.startswith("<!--")]
    return shown[0] if shown else ""


def by_bot(stage: Stage, comments: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for c in comments if c["user"]["login"] == stage.bot]


def open_pulls(stage: Stage) -> list[dict[str, Any]]:
    pulls = stage.gateway.paginate(f"/repos/{stage.repo}/pulls", params={"state": "open"})
    return [p for p in pulls if p["user"]["login"] == stage.bot]


# --------------------------------------------------------------------------- variants


def undo(stage: Stage) -> list[str]:
    """``@bot undo``: the run's comment, its status and its pull request taken back."""
    stage.comment(f"@{stage.bot} undo")
    if not stage.poll_and_play("tusk-undo"):
        return ["the poller did not dispatch the undo (tusk-undo)"]
    stage.show_thread()
    log = stage.log_issue("[Undo]")
    stage.show_log_issue(log)
    problems = []
    if log is None:
        problems.append("the undo opened no log issue")
    if by_bot(stage, stage.thread()):
        problems.append(f"the bot's comments are still on {stage.repo}#1")
    if open_pulls(stage):
        problems.append("the run's pull request is still open")
    return problems


def go_away(stage: Stage) -> list[str]:
    """``@bot go away``: the bot blocked, its fork and comments gone, its logs closed."""
    stage.comment(f"@{stage.bot} go away")
    if not stage.poll_and_play("tusk-go-away"):
        return ["the poller did not dispatch the go-away (tusk-go-away)"]
    stage.show_thread()
    log = stage.log_issue("[Agent Log]")  # the newest: the go-away's own
    log = log if log is not None and " go away " in log["title"] else None
    stage.show_log_issue(log)
    blocklist = stage.log_issue("Tusk blocklist")
    problems = []
    if log is None:
        problems.append("the go-away opened no log issue")
    if by_bot(stage, stage.thread()):
        problems.append(f"the bot's comments are still on {stage.repo}#1")
    if open_pulls(stage):
        problems.append("the bot's pull request is still open (its fork should be gone)")
    if blocklist is not None:
        stage.say(f"\n== The blocklist ({blocklist['html_url']})")
        stage.say(textwrap.indent(blocklist.get("body") or "", "    "))
    return problems


def over_limit(stage: Stage) -> list[str]:
    """A second mention past ``limits.runs_per_requester: 1``: answered, not run."""
    stage.comment(f"@{stage.bot} one more thing: add a CHANGELOG entry for the fix")
    if stage.poll_and_play("tusk-shard"):
        return ["the poller dispatched a mention over the limit"]
    stage.show_thread()
    answers = [c for c in by_bot(stage, stage.thread()) if first_marker(c["body"], "limit")]
    for answer in answers:
        stage.say(f"\n== The bot's answer ({answer['html_url']})\n{answer['body']}")
    return [] if answers else [f"the bot did not answer the mention over the limit on {stage.repo}"]


@dataclass(frozen=True)
class Variant:
    name: str
    shows: str
    after: Callable[[Stage], list[str]]
    config: Mapping[str, Any] = field(default_factory=dict)  # merged into the demo's tusk.yml


VARIANTS = {
    variant.name: variant
    for variant in (
        Variant("undo", "then `@bot undo` takes the run back", undo),
        Variant("go-away", "then `@bot go away` blocks the bot and cleans up", go_away),
        Variant(
            "over-limit",
            "then a second mention, over `limits.runs_per_requester: 1`, is answered, not run",
            over_limit,
            config={"limits": {"runs_per_requester": 1}},
        ),
    )
}


def with_config(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``extra``'s keys, one level of sections merged (pure)."""
    merged = dict(base)
    for key, value in extra.items():
        old = merged.get(key)
        merged[key] = (
            {**old, **value} if isinstance(old, dict) and isinstance(value, dict) else value
        )
    return merged
