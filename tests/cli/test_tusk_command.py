"""The `tusk` command: one subcommand per job, listed by --help, errors turned into exit codes."""

from __future__ import annotations

import argparse
import importlib.util
import re
from pathlib import Path

import pytest
import requests

from tusk.cli import main as cli


def test_help_lists_one_subcommand_per_job(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        cli.main(["--help"])
    assert caught.value.code == 0
    out = capsys.readouterr().out
    for name in ("poll", "receive-shard", "merge-shards", "build-context", "run-claude", "go-away"):
        assert f"    {name}" in out
    assert {command.name for command in cli.COMMANDS} >= {"mcp", "config", "sandbox"}


def test_no_arguments_prints_help_instead_of_failing_obscurely(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        cli.main([])
    assert "COMMAND" in capsys.readouterr().out


def test_user_error_in_a_subcommand_exits_one_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["config", "check", str(tmp_path / "absent.yml")]) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "file not found" in captured.err


def all_parsers() -> list[tuple[str, argparse.ArgumentParser]]:
    """Every command's parser and every sub-action's (`tusk mcp serve`, ...)."""
    found = []

    def walk(name: str, parser: argparse.ArgumentParser) -> None:
        found.append((name, parser))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for child_name, child in action.choices.items():
                    walk(f"{name} {child_name}", child)

    for command in cli.COMMANDS:
        walk(command.name, cli.command_parser(command))
    return found


# A read of the environment in a command module: os.environ.get("X"), environ["X"], getenv("X").
ENV_NAME = re.compile(
    r"""(?:environ|env|getenv)(?:\.get)?[(\[]\s*["']((?:TUSK|GITHUB|ANTHROPIC|RUNNER|CLAUDE)_\w+)"""
)


@pytest.mark.parametrize("command", cli.COMMANDS, ids=lambda c: c.name)
def test_help_names_the_environment_variables_the_command_reads(command: cli.Command) -> None:
    source = Path(importlib.util.find_spec(command.module).origin).read_text(encoding="utf-8")
    read_here = {
        name
        for name in ENV_NAME.findall(source)
        if name not in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_ACTIONS", "GITHUB_PATH")
    }
    assert read_here <= set(command.env), f"declare in cli.COMMANDS: {read_here - set(command.env)}"
    text = cli.command_parser(command).format_help()
    assert "environment:" in text
    for name in command.env:
        assert name in text, f"tusk {command.name} --help does not name {name}"


@pytest.mark.parametrize(
    "name,parser", all_parsers(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_every_option_with_a_default_shows_it_in_help(
    name: str, parser: argparse.ArgumentParser
) -> None:
    text = "".join(parser.format_help().split())
    assert "--debug" in text
    for action in parser._actions:
        if not action.option_strings or action.default in (None, False, argparse.SUPPRESS):
            continue
        rendered = "".join(parser._get_formatter()._expand_help(action).split())
        assert "default" in rendered, f"tusk {name} {action.option_strings[0]}: no default shown"
        assert rendered in text


def test_poll_names_every_missing_token_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "tusk.yml"
    config.write_text(
        "bot: tusk-bot\ncontrol_repo: alice/control\nallowed_users: [alice]\n", encoding="utf-8"
    )
    for name in ("TUSK_BOT_TOKEN", "TUSK_DISPATCH_TOKEN", "GITHUB_ACTIONS"):
        monkeypatch.delenv(name, raising=False)
    assert cli.main(["poll", "--once", "--config", str(config)]) == 1
    err = capsys.readouterr().err
    assert "TUSK_BOT_TOKEN: not set" in err and "TUSK_DISPATCH_TOKEN: not set" in err


def test_an_unreachable_github_is_one_line_unless_debug(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("TUSK_DEBUG", raising=False)

    def unreachable(command: cli.Command, args: argparse.Namespace) -> int:
        raise requests.ConnectionError("Max retries exceeded: Connection refused")

    monkeypatch.setattr(cli, "sub_run", unreachable)
    assert cli.main(["config", "schema"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.splitlines()[0] == ("error: Tusk stopped: Max retries exceeded: Connection refused")
    assert cli.main(["--debug", "config", "schema"]) == 1
    assert "Traceback" in capsys.readouterr().err
    assert cli.main(["config", "schema", "--debug"]) == 1
    assert "Traceback" in capsys.readouterr().err


def test_demo_repo_without_live_is_an_error_not_ignored(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    assert cli.main(["demo", "--repo", "alice/sandbox"]) == 1
    err = capsys.readouterr().err
    assert "--repo only apply to --live" in err
    assert "tusk demo --live --repo owner/name" in err


def test_a_mistyped_option_is_named_before_any_required_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`tusk poll --onse` is a typo of --once, not a poll missing --once or --loop."""
    from tusk.cli.main import main

    with pytest.raises(SystemExit) as exited:
        main(["poll", "--onse"])
    assert exited.value.code == 2
    error = capsys.readouterr().err
    assert "unrecognized option --onse (did you mean --once?)" in error
    assert "required" not in error


def test_an_unambiguous_prefix_of_an_option_still_works() -> None:
    from tusk.cli.main import command_parser, unknown_option

    poll = command_parser(next(c for c in cli.COMMANDS if c.name == "poll"))
    assert unknown_option(poll, ["--onc", "--config", "x.yml"]) is None
    assert unknown_option(poll, ["--once", "--", "--whatever"]) is None
