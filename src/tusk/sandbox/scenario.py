"""Scenarios: the YAML/JSON documents that seed the local GitHub.

``build_world`` checks a scenario completely before building anything:
unknown keys, wrong types and dangling references (an author, collaborator,
token user or fork parent that does not exist) are refused with the key path
(``repos[0].issues[1].comments[0].author``). Content written by the scenario
behaves as if users had written it through the API, so @mentions in it leave
notifications. See ``sandbox/scenarios/README.md`` for the format. The checks are
``scenario_shapes`` and ``scenario_refs``; the repositories are built by
``scenario_build``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tusk.sandbox.gitstore import GitStore
from tusk.sandbox.scenario_build import build_repo
from tusk.sandbox.scenario_refs import check_references
from tusk.sandbox.scenario_shapes import SCENARIO, check_shape
from tusk.sandbox.secondary import Limits, SecondaryLimits
from tusk.sandbox.world import World
from tusk.sandbox.world_clock import Clock, parse_time
from tusk.sandbox.world_records import Token, User


class ScenarioError(ValueError):
    """A scenario that cannot be loaded; the message lists every problem with its key path."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("invalid scenario:\n" + "\n".join(f"- {p}" for p in problems))


def read_scenario_file(path: str | Path) -> dict[str, Any]:
    text = Path(path).read_text(encoding="utf-8")
    return parse_scenario_text(text)


def parse_scenario_text(text: str) -> dict[str, Any]:
    """A scenario in YAML, or in JSON read as JSON: YAML 1.1 refuses the surrogate pair
    escapes ``json.dumps`` writes for astral characters (``"\\ud83e\\udd16"``)."""
    data = _as_json(text)
    if data is None:
        data = yaml.safe_load(text) or {}
    if not isinstance(data, dict):
        raise ScenarioError(["the scenario must be a mapping at the top level"])
    return data


def _as_json(text: str) -> Any:
    """``text`` read as JSON when it is a JSON object, else None (then it is YAML)."""
    if not text.lstrip().startswith("{"):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None  # a YAML flow mapping such as ``{now: 2026-01-01}``


def build_world(data: dict[str, Any], git: GitStore | None) -> World:
    """Check ``data`` and build the world it describes (git repositories included)."""
    problems: list[str] = []
    check_shape(data, SCENARIO, "", problems)
    problems += Limits.problems((data.get("settings") or {}).get("secondary_limits"))
    if not problems:
        problems = check_references(data)
    if problems:
        raise ScenarioError(problems)
    start = parse_time(data["now"]) if "now" in data else None
    world = World(clock=Clock(start), git=git)
    settings = data.get("settings") or {}
    world.fork_ready_after_reads = settings.get("fork_ready_after_reads", 0)
    world.fork_git_ready_after_requests = settings.get("fork_git_ready_after_requests", 0)
    world.listing_lag = float(settings.get("listing_lag_seconds", 0))
    world.listing_lags = [float(x) for x in settings.get("listing_lags_seconds", [])]
    world.comment_listing_lag = float(settings.get("comment_listing_lag_seconds", 0))
    world.mark_read_late_listings = int(settings.get("mark_read_late_listings", 0))
    world.page_size = settings.get("page_size")
    world.fork_deletion_closes_pulls = bool(settings.get("fork_deletion_closes_pulls", True))
    world.discussion_subject_url = bool(settings.get("discussion_subject_url", True))
    world.secondary = SecondaryLimits(Limits.from_setting(settings.get("secondary_limits")))
    for spec in data.get("users", []):
        user = User(
            login=spec["login"],
            id=spec.get("id") or world.new_id(),
            type=spec.get("type", "Bot" if spec["login"].endswith("[bot]") else "User"),
            name=spec.get("name"),
            email=spec.get("email"),
            members=[str(m) for m in spec.get("members") or []],
        )
        world.users[user.login.lower()] = user
    for name, spec in (data.get("tokens") or {}).items():
        user = world.users[spec["user"].lower()]
        world.tokens[name] = Token(
            name=name,
            user=user.login,
            scopes=list(spec.get("scopes", [])),
            read_only=spec.get("read_only", False),
            repository=spec.get("repository"),
            permissions=dict(spec.get("permissions") or {}),
        )
    # Parents first, so forks can be cloned from them.
    ordered = sorted(data.get("repos", []), key=lambda r: 1 if "fork_of" in r else 0)
    for spec in ordered:
        build_repo(world, spec)
    return world
