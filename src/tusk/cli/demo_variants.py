"""``tusk demo --variant NAME``: each bot command tried offline, during or after the demo's run.

One table, ``VARIANTS``: a name, what it shows, what it adds to the demo's tusk.yml,
the scripted model it plays against, what happens WHILE the agent works (``during``:
the model holds a turn on a gate until the demo releases it) and once the run is
written up (``after``). Each posts the maintainer's comment on the demo thread,
polls, plays what the poller dispatched through the real workflows under act (the
undo, go-away and stop jobs), prints the thread and the log issue it leaves as the
main demo does, and returns what it expected but did not find. A new command is
one or two functions and one row.
"""

from __future__ import annotations

import textwrap
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tusk.issues import followups
from tusk.issues.stop_record import stop_of
from tusk.sandbox.model_script import current_prompt
from tusk.sandbox.model_server import DEFAULT_CONVERSATION
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
    model: Any = None  # the scripted model (``ModelServer``): its journal and gates
    over: threading.Event = field(default_factory=threading.Event)  # the runs have ended

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

    def wait_for(self, what: str, found: Callable[[], bool], seconds: float = 600.0) -> bool:
        """Poll the local GitHub until ``found()``; False (and said) after ``seconds``."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if found():
                return True
            if self.over.wait(1.0):  # the run ended first: it will not come
                self.say(f"\n== The run ended before {what}")
                return found()
        self.say(f"\n== Gave up waiting for {what} after {seconds:.0f} s")
        return False

    def log_comments(self, issue: dict[str, Any]) -> list[dict[str, Any]]:
        path = f"/repos/{self.control_repo}/issues/{issue['number']}/comments"
        return list(self.gateway.paginate(path))

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


# While the agent works: the scripts demo-followup-model.yml and demo-stop-model.yml
# post WORKING on the thread, then hold their next answer on GATE.
WORKING = "Looking into it"
GATE = "maintainer"
FOLLOW_UP = "also say on the thread which file you changed"
ANSWER = "I changed README.md only."
AFTER_STOP = "This comment comes after the stop"


def agent_working(stage: Stage) -> bool:
    """The agent said it is working (its first comment), while its turn is held."""
    return stage.wait_for(
        "the agent's first comment",
        lambda: any(WORKING in c["body"] for c in by_bot(stage, stage.thread())),
    )


def follow_up_during(stage: Stage) -> list[str]:
    """While the agent works: the maintainer's follow-up, polled; the poller records it
    on the run's log issue (no second run); then the agent's turn goes on."""
    try:
        if not agent_working(stage):
            return [f"the agent never said it was working on {stage.repo}#1"]
        shards = sum(d["event_type"] == "tusk-shard" for d in stage.dispatches())
        stage.comment(f"@{stage.bot} {FOLLOW_UP}")
        stage.poll()
        problems = []
        if sum(d["event_type"] == "tusk-shard" for d in stage.dispatches()) != shards:
            problems.append("the poller started a second run for the follow-up")
        log = stage.log_issue("[Agent Log]")
        held = followups.recorded(stage.log_comments(log), bot=stage.bot) if log else []
        if not any(FOLLOW_UP in item.text for item in held):
            problems.append("the poller did not record the follow-up on the run's log issue")
        else:
            stage.say(
                f"\n== The follow-up is recorded on the run's log issue {log and log['html_url']}"
            )
        return problems
    finally:
        stage.model.release(GATE)


def follow_up_after(stage: Stage) -> list[str]:
    """The same session got the follow-up as a user message; one pull request."""
    stage.show_thread()
    problems = []
    asked = [e for e in stage.model.journal() if FOLLOW_UP in current_prompt(e["request"])]
    if not asked:
        problems.append("the agent's model never got the follow-up as a user message")
    elif "Opened the pull request" not in str(asked[0]["request"]["messages"]):
        problems.append("the follow-up reached the model without the session's earlier turns")
    failed = stage.model.failures() + stage.model.unreached()
    if failed:
        problems.append(f"the scripted model's expectations failed: {failed}")
    pulls = stage.gateway.paginate(f"/repos/{stage.repo}/pulls", params={"state": "all"})
    count = sum(p["user"]["login"] == stage.bot for p in pulls)
    if count != 1:
        problems.append(f"the thread ended with {count} pull requests, not one")
    if not any(ANSWER in c["body"] for c in by_bot(stage, stage.thread())):
        problems.append(f"the agent's answer to the follow-up is not on {stage.repo}#1")
    log = stage.log_issue("[Agent Log]")
    done = followups.delivered(stage.log_comments(log), bot=stage.bot) if log else {}
    if "delivered" not in done.values():
        problems.append("the run's log issue does not say the follow-up was delivered")
    return problems


def stop_during(stage: Stage) -> list[str]:
    """While the agent works: ``@bot stop``, polled and played (the stop job); the
    held turn goes on only once the session had the check interval to see it."""
    try:
        if not agent_working(stage):
            return [f"the agent never said it was working on {stage.repo}#1"]
        stage.comment(f"@{stage.bot} stop")
        if not stage.poll_and_play("tusk-stop"):
            return ["the poller did not dispatch the stop (tusk-stop)"]
        log = stage.log_issue("[Agent Log]")
        if log is None or stop_of(stage.log_comments(log), bot=stage.bot) is None:
            return ["the stop job recorded no stop on the run's log issue"]
        stage.say(f"\n== The stop is recorded on the run's log issue {log['html_url']}")
        # The session ends within the check interval of the record: wait it out (and
        # a margin), then let the held turn answer with a write, which must not land.
        time.sleep(STOP_CHECK_SECONDS + 3)
        return []
    finally:
        stage.model.release(GATE)


def branch_exists(stage: Stage, head: dict[str, Any]) -> bool:
    from tusk.errors import TuskError

    try:
        stage.gateway.get(f"/repos/{head['repo']['full_name']}/branches/{head['ref']}")
    except TuskError:
        return False
    return True


def bot_blocked(stage: Stage) -> bool:
    """Does the blocklist keep the bot from the demo's repository or its maintainer?"""
    from tusk.contracts.config import Settings
    from tusk.issues.state import StateStore

    settings = Settings(bot=stage.bot, control_repo=stage.control_repo, allowed_users=("alice",))
    blocklist = StateStore(stage.gateway, settings).read_blocklist()
    return bool(blocklist.blocks(stage.repo) or blocklist.blocks_user("alice"))


def stop_after(stage: Stage) -> list[str]:
    """The run ended by the stop: work kept, bot allowed, log issue says who."""
    stage.show_thread()
    log = stage.log_issue("[Agent Log]")
    stage.show_log_issue(log)
    problems = []
    mine = by_bot(stage, stage.thread())
    if any(AFTER_STOP in c["body"] for c in mine):
        problems.append("a write the agent tried after the stop reached the thread")
    if not any(WORKING in c["body"] for c in mine):
        problems.append("the agent's comment from before the stop is gone")
    pulls = open_pulls(stage)
    if not pulls:
        problems.append("the pull request the agent opened before the stop is gone")
    elif not branch_exists(stage, pulls[0]["head"]):
        problems.append("the branch the agent pushed before the stop is gone")
    if log is None or (log["state"], log.get("state_reason")) != ("closed", "completed"):
        problems.append("the run's log issue is not closed as completed")
    elif "stopped by alice" not in str(log.get("body")) + str(
        [c["body"] for c in stage.log_comments(log)]
    ):
        problems.append("the run's log issue does not say alice stopped it")
    status = next((c["body"] for c in mine if "Stopped" in c["body"]), "")
    if "alice" not in status:
        problems.append("the status comment does not say alice stopped the run")
    if bot_blocked(stage):
        problems.append("the stop blocked the bot")
    journal = stage.model.journal()
    held = [e["n"] for e in journal if GATE in e.get("held", [])]
    # Released STOP_CHECK_SECONDS + 3 s after the stop was seen on the log issue: a
    # session that asks the model again after that did not end within the interval.
    later = [
        e
        for e in journal
        if held and e["n"] > held[0] and e["conversation"] == DEFAULT_CONVERSATION
    ]
    if not held:
        problems.append("the agent's turn was never held for the stop")
    elif later:
        problems.append("the session still asked the model after the stop, past the check interval")
    return problems


@dataclass(frozen=True)
class Variant:
    name: str
    shows: str
    after: Callable[[Stage], list[str]]
    config: Mapping[str, Any] = field(default_factory=dict)  # merged into the demo's tusk.yml
    during: Callable[[Stage], list[str]] | None = None  # while the agent works
    model: str = "demo-model.yml"  # the scripted model's script (sandbox/scenarios)


STOP_CHECK_SECONDS = 2.0  # the stop variant's blocklist-check interval


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
        Variant(
            "follow-up",
            "with a follow-up posted while the agent works, reaching the same session",
            follow_up_after,
            during=follow_up_during,
            model="demo-followup-model.yml",
        ),
        Variant(
            "stop",
            "with `@bot stop` posted while the agent works, ending the run and keeping its work",
            stop_after,
            config={"limits": {"blocklist_check_seconds": STOP_CHECK_SECONDS}},
            during=stop_during,
            model="demo-stop-model.yml",
        ),
    )
}


def while_agent_works(
    variant: Variant, stage: Callable[[], Stage], play: Callable[[], object]
) -> list[str]:
    """``play`` the runs while ``variant.during`` acts on its own thread; returns what
    that missed. Nothing stays held on the model once the runs are over."""
    if variant.during is None:
        play()
        return []
    acting = stage()
    acting.say(f"\n== The variant {variant.name}, while the agent works")
    found: list[str] = []
    during = variant.during
    worker = threading.Thread(target=lambda: found.extend(during(acting)), daemon=True)
    worker.start()
    try:
        play()
    finally:
        acting.over.set()
        worker.join(timeout=900)
        acting.model.release_all()
    return found


def with_config(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``extra``'s keys, one level of sections merged (pure)."""
    merged = dict(base)
    for key, value in extra.items():
        old = merged.get(key)
        merged[key] = (
            {**old, **value} if isinstance(old, dict) and isinstance(value, dict) else value
        )
    return merged
