"""``tusk demo --variant NAME``: every bot command tried offline after the demo's run,
through the real workflows under act, each printing the thread and the log issue it
leaves, and judged by the local GitHub's state (not by what it printed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tusk.cli.demo import BOT, DEMO_CONFIG, play_offline
from tusk.cli.demo_variants import VARIANTS, with_config
from tusk.cli.main import COMMANDS, build_parser, command_parser

PRINTED = {
    "undo": ["== The log issue: [Undo] alice/widgets #1 by alice", "== The thread alice/widgets#1"],
    "go-away": ["go away — ", "== The blocklist (", "== The thread alice/widgets#1"],
    "over-limit": ["== The bot's answer (", "== The thread alice/widgets#1"],
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


@pytest.mark.act
@pytest.mark.e2e
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_each_demo_variant_runs_its_command_after_the_run(
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
