"""``tusk demo --variant NAME``: every bot command tried offline after the demo's run,
through the real workflows under act, each printing the thread and the log issue it
leaves, and judged by the local GitHub's state (not by what it printed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tusk.cli.demo import BOT, DEMO_CONFIG, play_offline
from tusk.cli.demo_variants import VARIANTS, Stage, Variant, while_agent_works, with_config
from tusk.cli.main import COMMANDS, build_parser, command_parser

PRINTED = {
    "undo": ["== The log issue: [Undo] alice/widgets #1 by alice", "== The thread alice/widgets#1"],
    "go-away": ["go away — ", "== The blocklist (", "== The thread alice/widgets#1"],
    "over-limit": ["== The bot's answer (", "== The thread alice/widgets#1"],
    "follow-up": [
        "== The follow-up is recorded on the run's log issue ",
        "== The thread alice/widgets#1",
    ],
    "stop": ["== The stop is recorded on the run's log issue ", "== The log issue: [Agent Log]"],
}


def test_every_variant_is_named_in_the_table_and_offered_by_the_command() -> None:
    assert set(PRINTED) == set(VARIANTS)
    demo = next(command for command in COMMANDS if command.name == "demo")
    args = command_parser(demo).parse_args(["--variant", "over-limit"])
    assert args.variant == "over-limit"
    assert build_parser() is not None
    merged = with_config(DEMO_CONFIG, VARIANTS["over-limit"].config)
    assert merged["limits"] == {**DEMO_CONFIG["limits"], "runs_per_requester": 1}
    assert DEMO_CONFIG["limits"].get("runs_per_requester") is None  # the base is untouched


class Gates:
    """The scripted model's gates, as the acting thread sees them."""

    def __init__(self) -> None:
        self.released: list[str] = []

    def release(self, gate: str) -> None:
        self.released.append(gate)

    def release_all(self) -> None:
        self.released.append("*")


def stage(said: list[str]) -> Stage:
    return Stage(
        gateway=None,
        repo="alice/widgets",
        bot=BOT,
        control_repo="alice/tusk-control",
        say=said.append,
        poll=lambda: None,
        dispatches=list,
        play=lambda d, n: None,
        model=Gates(),
    )


def test_a_variant_acts_while_the_runs_play_and_stops_waiting_once_they_end() -> None:
    import threading
    import time

    said: list[str] = []
    playing = threading.Event()
    seen: list[bool] = []

    def during(acting: Stage) -> list[str]:
        seen.append(playing.wait(5))  # it runs while the runs play
        if not acting.wait_for("a comment that never comes", lambda: False, seconds=60):
            return ["never came"]
        return []

    def play() -> None:
        playing.set()
        time.sleep(0.3)

    started = time.monotonic()
    acting = stage(said)
    found = while_agent_works(Variant("x", "x", lambda s: [], during=during), lambda: acting, play)
    assert seen == [True]
    assert found == ["never came"]
    assert time.monotonic() - started < 10  # not the 60 s it would have waited
    assert any("The run ended before a comment that never comes" in line for line in said)
    assert acting.model.released == ["*"]  # nothing stays held


def test_a_variant_without_during_only_plays() -> None:
    played: list[bool] = []
    found = while_agent_works(
        Variant("x", "x", lambda s: []), lambda: stage([]), lambda: played.append(True)
    )
    assert (found, played) == ([], [True])


@pytest.mark.act
@pytest.mark.e2e
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_each_demo_variant_runs_its_command_during_or_after_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    code, outcome = play_offline(tmp_path, variant=name)
    printed = capsys.readouterr().out
    assert outcome is not None
    assert outcome.problems() == [] and outcome.variant_problems == [], printed[-4000:]
    assert code == 0, printed[-4000:]
    for wanted in PRINTED[name]:
        assert wanted in printed, (wanted, printed[-4000:])
    assert "== The maintainer comments (" in printed
    assert f"@{BOT}" in printed
