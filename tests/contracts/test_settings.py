"""tusk.yml and the environment: every way a configuration can be wrong is reported."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest
import yaml

from tusk.cli import main as cli
from tusk.contracts.config import (
    Settings,
    load_secrets,
    load_settings,
    parse_settings,
    resolve_config_path,
)
from tusk.errors import ConfigError

EXAMPLE = Path(__file__).resolve().parents[2] / "tusk.example.yml"
MINIMAL = {"bot": "tusk-bot", "control_repo": "alice/tusk-control", "allowed_users": ["alice"]}


def problems_of(data: object) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_settings(data, source="tusk.yml")
    return caught.value.problems


def test_minimal_config_gets_every_documented_default() -> None:
    settings = parse_settings(MINIMAL, source="tusk.yml")
    assert settings.limits.comments_per_thread == 2
    assert settings.limits.issues_per_repo == 1
    assert settings.limits.prs_per_repo == 1
    assert settings.limits.memory_writes_per_run == 3
    assert settings.limits.shard_bytes == 48 * 1024
    assert settings.limits.loop_threshold == 6
    assert settings.discussions_write is False
    assert settings.record_only is False
    assert settings.go_away.phrase == "go away"


def test_example_file_is_valid_and_documents_every_key() -> None:
    data = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    settings = parse_settings(data, source=str(EXAMPLE))
    assert settings.bot == "tusk-bot"

    def keys(model: type, prefix: str = "") -> set[str]:
        out = set()
        for name, field in model.model_fields.items():
            if field.deprecated:  # an old name, read for one release, documented no more
                continue
            out.add(prefix + name)
            annotation = field.annotation
            # A section, or a union with one (agent.network: `open` or a mapping).
            for candidate in (annotation, *typing.get_args(annotation)):
                if isinstance(candidate, type) and issubclass(candidate, Settings.__base__):
                    out |= keys(candidate, f"{prefix}{name}.")
        return out

    def present(mapping: dict, prefix: str = "") -> set[str]:
        out = set()
        for name, value in mapping.items():
            out.add(prefix + name)
            if isinstance(value, dict):
                out |= present(value, f"{prefix}{name}.")
        return out

    assert keys(Settings) == present(data)


@pytest.mark.parametrize("missing", ["bot", "control_repo", "allowed_users"])
def test_missing_required_key_is_named(missing: str) -> None:
    data = {k: v for k, v in MINIMAL.items() if k != missing}
    example = {
        "bot": "`bot: my-bot`",
        "control_repo": "`control_repo: my-org/tusk-control`",
        "allowed_users": "`allowed_users: [alice, bob]`",
    }[missing]
    assert problems_of(data) == [f"{missing}: is required but missing; for example {example}"]


def test_unknown_key_is_refused_with_its_path() -> None:
    problems = problems_of({**MINIMAL, "limits": {"coments_per_thread": 3}})
    assert problems == [
        "limits.coments_per_thread: is not a key Tusk knows; did you mean `comments_per_thread`?"
    ]


def test_unknown_top_level_key_does_not_echo_its_value() -> None:
    problems = problems_of({**MINIMAL, "token": "ghp_secretvalue"})
    assert problems == ["token: is not a key Tusk knows; `tusk config schema` lists every key"]
    assert "ghp_secretvalue" not in "\n".join(problems)


@pytest.mark.parametrize(
    ("patch", "path"),
    [
        ({"staged": "maybe"}, "staged"),
        ({"limits": {"comments_per_thread": "two"}}, "limits.comments_per_thread"),
        ({"limits": {"comments_per_thread": -1}}, "limits.comments_per_thread"),
        ({"limits": {"shard_bytes": 10**6}}, "limits.shard_bytes"),
        ({"limits": {"state_issue_rollover": 2600}}, "limits.state_issue_rollover"),
        ({"limits": 5}, "limits"),
        ({"allowed_users": "alice"}, "allowed_users"),
        ({"agent": {"builtin_tools": "Bash"}}, "agent.builtin_tools"),
    ],
)
def test_wrong_type_or_range_is_reported_at_its_key_path(patch: dict, path: str) -> None:
    problems = problems_of({**MINIMAL, **patch})
    assert len(problems) == 1
    assert problems[0].startswith(f"{path}: ")


@pytest.mark.parametrize("login", ["-alice", "alice bob", "@alice", "", "a" * 40, "al/ice"])
def test_bad_login_is_refused(login: str) -> None:
    problems = problems_of({**MINIMAL, "bot": login})
    assert len(problems) == 1 and problems[0].startswith("bot: ")
    problems = problems_of({**MINIMAL, "allowed_users": ["alice", login]})
    assert len(problems) == 1 and problems[0].startswith("allowed_users[1]: ")


@pytest.mark.parametrize(
    "repo", ["alice", "alice/", "/widgets", "alice/wid gets", "a/b/c", "alice/..", "../widgets"]
)
def test_bad_control_repo_is_refused(repo: str) -> None:
    problems = problems_of({**MINIMAL, "control_repo": repo})
    assert len(problems) == 1 and problems[0].startswith("control_repo: ")


def test_empty_allowed_users_is_refused_with_a_reason() -> None:
    problems = problems_of({**MINIMAL, "allowed_users": []})
    assert len(problems) == 1
    assert problems[0].startswith("allowed_users: ") and "at least one login" in problems[0]


def test_unknown_reaction_is_refused_and_null_is_allowed() -> None:
    problems = problems_of({**MINIMAL, "go_away": {"reaction": "thumbsup"}})
    assert len(problems) == 1 and problems[0].startswith("go_away.reaction: ")
    assert (
        parse_settings({**MINIMAL, "go_away": {"reaction": None}}, source="x").go_away.reaction
        is None
    )


def test_several_mistakes_in_one_file_are_all_reported(tmp_path: Path) -> None:
    path = tmp_path / "tusk.yml"
    path.write_text(
        "bot: -bad-\n"
        "allowed_users: []\n"
        "limits:\n  loop_threshold: one\n  shard_bytes: 12\n"
        "labels:\n  histroy: x\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    paths = sorted(problem.split(":", 1)[0] for problem in caught.value.problems)
    assert paths == [
        "allowed_users",
        "bot",
        "control_repo",
        "labels.histroy",
        "limits.loop_threshold",
        "limits.shard_bytes",
    ]
    assert "6 problem(s)" in caught.value.title


def test_yaml_syntax_error_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "tusk.yml"
    path.write_text("bot: tusk-bot\nallowed_users: [alice\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    (problem,) = caught.value.problems
    assert problem.startswith("(YAML) line 3: this is not valid YAML")


@pytest.mark.parametrize("text", ["- a\n- b\n", "just a string\n", ""])
def test_file_that_is_not_a_mapping_is_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "tusk.yml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    assert caught.value.problems == [
        "(top level): must be a block of keys; for example `bot: my-bot`"
    ]


def test_missing_file_says_how_to_point_at_one(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path / "nope.yml")
    assert "--config" in caught.value.problems[0] and "TUSK_CONFIG" in caught.value.problems[0]


def test_config_path_resolution_order() -> None:
    env = {"TUSK_CONFIG": "from-env.yml"}
    assert resolve_config_path("explicit.yml", env) == Path("explicit.yml")
    assert resolve_config_path(None, env) == Path("from-env.yml")
    assert resolve_config_path(None, {}) == Path("tusk.yml")


def test_cli_config_check_accepts_the_example(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["config", "check", str(EXAMPLE)]) == 0
    assert "ok (bot tusk-bot" in capsys.readouterr().out


def test_cli_config_check_uses_tusk_config_then_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tusk.yml").write_text(yaml.safe_dump(MINIMAL), encoding="utf-8")
    other = tmp_path / "other.yml"
    other.write_text(yaml.safe_dump({**MINIMAL, "bot": "other-bot"}), encoding="utf-8")
    monkeypatch.delenv("TUSK_CONFIG", raising=False)
    assert cli.main(["config", "check"]) == 0
    assert "bot tusk-bot" in capsys.readouterr().out
    monkeypatch.setenv("TUSK_CONFIG", str(other))
    assert cli.main(["config", "check"]) == 0
    assert "bot other-bot" in capsys.readouterr().out
    assert cli.main(["config", "check", "--config", str(tmp_path / "tusk.yml")]) == 0
    assert "bot tusk-bot" in capsys.readouterr().out


def test_cli_config_check_reports_every_problem_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    path = tmp_path / "bad.yml"
    path.write_text("bot: tusk-bot\nstaged: maybe\nextra: 1\n", encoding="utf-8")
    assert cli.main(["config", "check", str(path)]) == 1
    captured = capsys.readouterr()
    for key in ("control_repo", "allowed_users", "staged", "extra"):
        assert f"  - {key}: " in captured.err
    assert captured.out == ""  # no ::error:: annotation outside Actions


def test_cli_config_schema_prints_the_settings_schema(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    assert cli.main(["config", "schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert set(schema["required"]) == {"bot", "control_repo", "allowed_users"}
    assert schema["additionalProperties"] is False


def test_secrets_are_masked_the_moment_they_are_read_in_actions(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    secrets = load_secrets({"TUSK_BOT_TOKEN": "ghp_bot", "ANTHROPIC_API_KEY": "sk-ant\nline2"})
    out = capsys.readouterr().out.splitlines()
    assert out == ["::add-mask::ghp_bot", "::add-mask::sk-ant", "::add-mask::line2"]
    assert secrets.bot_token is not None and "ghp_bot" not in repr(secrets)


def test_secrets_are_not_announced_outside_actions(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    load_secrets({"TUSK_BOT_TOKEN": "ghp_bot"})
    assert capsys.readouterr().out == ""


def test_require_names_every_missing_variable() -> None:
    secrets = load_secrets({"TUSK_AGENT_TOKEN": "x", "TUSK_READ_TOKEN": ""}, mask=False)
    assert secrets.require("agent_token")["agent_token"].get_secret_value() == "x"
    with pytest.raises(ConfigError) as caught:
        secrets.require("agent_token", "read_token", "anthropic_api_key")
    text = "\n".join(caught.value.problems)
    assert "TUSK_READ_TOKEN: not set" in text and "ANTHROPIC_API_KEY: not set" in text
    assert "TUSK_AGENT_TOKEN" not in text


def test_api_url_comes_from_the_environment_without_trailing_slash() -> None:
    assert load_secrets({}, mask=False).github_api_url == "https://api.github.com"
    env = {"TUSK_GITHUB_API_URL": "https://ghe.example/api/v3/"}
    assert load_secrets(env, mask=False).github_api_url == "https://ghe.example/api/v3"


def test_approval_is_required_for_all_repositories_or_the_ones_listed() -> None:
    from tusk.contracts.config import Settings

    base = {"bot": "tusk-bot", "control_repo": "alice/tusk-control", "allowed_users": ["alice"]}
    assert not Settings.model_validate(base).approval_required("alice/widgets")
    every = Settings.model_validate({**base, "agent": {"approval": "required"}})
    assert every.approval_required("anyone/anything")
    listed = Settings.model_validate({**base, "agent": {"approval": ["Alice/Widgets"]}})
    assert listed.approval_required("alice/widgets")
    assert not listed.approval_required("alice/gadgets")
    assert listed.agent.approval_days == 7


def test_approvers_default_to_the_allowed_users() -> None:
    from tusk.contracts.config import Settings

    base = {"bot": "tusk-bot", "control_repo": "alice/tusk-control", "allowed_users": ["alice"]}
    assert Settings.model_validate(base).agent.approvers is None
    named = Settings.model_validate({**base, "agent": {"approvers": ["carol"]}})
    assert named.agent.approvers == ("carol",)


def test_a_file_that_is_not_yaml_is_not_told_to_fix_each_key(tmp_path: Path) -> None:
    bad = tmp_path / "tusk.yml"
    bad.write_text("bot: [unclosed\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_settings(bad)
    assert "(YAML)" in caught.value.hint and "Fix the file as said above" in caught.value.hint
    assert "Fix each key" not in caught.value.hint
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path / "missing.yml")
    assert "Fix the file" in caught.value.hint


def test_sigstore_signing_is_only_ever_chosen_by_naming_it() -> None:
    assert parse_settings(MINIMAL, source="tusk.yml").attestation == "auto"
    chosen = parse_settings({**MINIMAL, "attestation": "sigstore"}, source="tusk.yml")
    assert chosen.attestation == "sigstore"
    problems = problems_of({**MINIMAL, "attestation": "public-good"})
    assert len(problems) == 1 and problems[0].startswith("attestation: ")
    assert "'sigstore'" in problems[0]  # the refusal lists the values, the opt-in among them
