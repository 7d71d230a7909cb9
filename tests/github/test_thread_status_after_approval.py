"""A status that waited for approval says the set's verdict once it has one (pure)."""

from __future__ import annotations

from tusk.github.thread_status import Status, render_status, settled_after_approval

RENDER = {
    "jobid": "job-1",
    "nonce": "n1",
    "bot": "tusk-bot",
    "go_away": "go away",
    "log_issue_url": "https://github.com/alice/control/issues/7",
}


def test_the_waiting_line_gives_way_to_the_verdict_and_nothing_stale_stays() -> None:
    waiting = render_status(
        Status(phase="done", headline="3 write(s) staged", approval=True), **RENDER
    )
    assert "Waiting for approval" in waiting
    settled = settled_after_approval(waiting, "✅ **Applied.** Applied as approved by `alice`")
    assert settled is not None
    assert "Waiting for approval" not in settled and "No write was made yet" not in settled
    assert settled.split("\n")[1] == "✅ **Applied.** Applied as approved by `alice`"
    # Its marker and footer stay: undo and go-away still find it as the run's.
    assert settled.split("\n")[0] == waiting.split("\n")[0]
    assert settled.endswith(waiting.split("\n", 2)[2])


def test_a_status_that_did_not_wait_is_left_as_it_is() -> None:
    done = render_status(Status(phase="done", headline="Completed", ok=True), **RENDER)
    assert settled_after_approval(done, "✅ **Applied.**") is None
    assert settled_after_approval("Some other comment\nby someone", "✅ **Applied.**") is None
