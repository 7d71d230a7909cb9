"""Scenario checking and the spec index, without a server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tusk.sandbox.scenario import ScenarioError, build_world
from tusk.sandbox.spec import SpecNotFound, find_node_modules, load_openapi
from tusk.sandbox.world import mentioned_logins

SCENARIOS = Path(__file__).resolve().parents[2] / "src" / "tusk" / "sandbox" / "scenarios"


def _problems(data: dict[str, Any]) -> list[str]:
    with pytest.raises(ScenarioError) as refused:
        build_world(data, None)
    return refused.value.problems


def test_unknown_key_is_refused_with_its_path() -> None:
    data = {
        "users": [{"login": "alice"}],
        "repos": [{"name": "alice/w", "issues": [{"author": "alice", "title": "t", "titel": "x"}]}],
    }
    assert any(p.startswith("repos[0].issues[0].titel: unknown key") for p in _problems(data))


def test_dangling_author_is_refused_with_its_path() -> None:
    data = {
        "users": [{"login": "alice"}],
        "repos": [
            {
                "name": "alice/w",
                "issues": [
                    {"author": "alice", "title": "t", "comments": [{"author": "eve", "body": "b"}]}
                ],
            }
        ],
    }
    assert _problems(data) == [
        "repos[0].issues[0].comments[0].author: unknown user 'eve' (add it under users)"
    ]


def test_dangling_token_user_and_fork_parent_are_refused() -> None:
    data = {
        "users": [{"login": "alice"}],
        "tokens": {"t": {"user": "bob"}},
        "repos": [{"name": "alice/w", "fork_of": "x/y"}],
    }
    problems = _problems(data)
    assert "tokens.t.user: unknown user 'bob' (add it under users)" in problems
    assert "repos[0].fork_of: unknown repository 'x/y'" in problems


# The folder also holds the scripted model's scripts (``*-model.yml``).
GITHUB_SCENARIOS = sorted(p for p in SCENARIOS.glob("*.yml") if not p.stem.endswith("-model"))


@pytest.mark.parametrize("path", GITHUB_SCENARIOS, ids=lambda p: p.name)
def test_documented_scenarios_load(path: Path) -> None:
    world = build_world(yaml.safe_load(path.read_text()), None)
    assert world.repos


def test_demo_scenario_mentions_the_bot() -> None:
    world = build_world(yaml.safe_load((SCENARIOS / "demo.yml").read_text()), None)
    assert [(t.user, t.reason, t.repo) for t in world.threads] == [
        ("tusk-bot", "mention", "alice/widgets")
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("@tusk-bot fix it", ["tusk-bot"]),
        ("mail me at a@tusk-bot.dev", []),
        ("`@tusk-bot` in code", []),
        ("> @tusk-bot quoted", []),
        ("hey @renovate[bot]!", ["renovate"]),  # a login ends at "["
        ("hey @TUSK-BOT[bot]!", ["tusk-bot"]),
    ],
)
def test_mentions_follow_githubs_rules(text: str, expected: list[str]) -> None:
    assert mentioned_logins(text) == expected


def test_spec_is_loaded_once_per_process() -> None:
    assert load_openapi() is load_openapi()


def test_slashed_branch_names_match_the_branch_operations() -> None:
    spec = load_openapi()
    op = spec.match("GET", "/repos/a/b/branches/feature/x/protection")
    assert op is not None and op.operation_id == "repos/get-branch-protection"
    assert op.path_params["branch"] == "feature/x"
    assert spec.match("GET", "/repos/a/b/frobnicate") is None


def test_nullable_enum_admits_null_as_github_answers() -> None:
    spec = load_openapi()
    op = spec.match("GET", "/repos/a/b/issues/1")
    assert op is not None
    body = spec.complete(op, 200, {"number": 1, "state_reason": None, "user": {"login": "a"}})
    assert spec.check_response(op, 200, body, True) == []


def test_node_modules_env_must_hold_the_description(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TUSK_NODE_MODULES", str(tmp_path))
    with pytest.raises(SpecNotFound):
        find_node_modules()


def test_times_may_be_yaml_timestamps_or_strings_and_bad_ones_are_named() -> None:
    text = """
now: 2026-01-01T00:00:00Z
users: [{login: alice}]
repos:
  - name: alice/w
    issues: [{author: alice, title: t, created_at: 2025-12-31T10:00:00Z}]
"""
    world = build_world(yaml.safe_load(text), None)
    assert world.repos["alice/w"].issues[1].created_at.year == 2025
    data = {
        "users": [{"login": "a"}],
        "repos": [{"name": "a/w", "issues": [{"author": "a", "title": "t", "created_at": "soon"}]}],
    }
    assert _problems(data) == ["repos[0].issues[0].created_at: 'soon' is not an ISO 8601 time"]
