"""The recordings replayed against the local GitHub (the recorded-truth tests).

Each recording with a seed (``tusk.sandbox.recorded_seeds``) is played in order on a
fresh ``SandboxApp``: every exchange whose operation the stand-in serves is sent
as recorded (method, path, query, body, ``Accept``, the recorded user's token),
and the answer is judged by ``tusk.sandbox.recorded.differences``. Where the
recording followed a ``Link`` or a ``Location``, the replay follows the
stand-in's own, as Tusk does. Exchanges the stand-in does not serve are listed,
not judged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tusk.sandbox import repo_ids
from tusk.sandbox.github_app import SandboxApp
from tusk.sandbox.outcomes import Outcome
from tusk.sandbox.recorded import Exchange, differences, links
from tusk.sandbox.recorded_seeds import REWRITES, seed
from tusk.sandbox.rest import HANDLERS

# What Tusk reads of a JSON body: every key its source reads with ``.get("key")`` or
# ``["key"]`` (the stand-in's own code aside). Over-inclusive on purpose: a key some
# other dictionary shares only makes the comparison stricter.
KEY_READ = re.compile(r"""(?:\.get\(\s*|\[\s*)["']([A-Za-z_][A-Za-z0-9_+-]*)["']""")


def fields_read(product: Path) -> frozenset[str]:
    """The keys Tusk's code under ``product`` (``src/tusk``) reads, the stand-ins aside."""
    found: set[str] = set()
    for source in product.rglob("*.py"):
        if "sandbox" in source.relative_to(product).parts:
            continue
        found.update(KEY_READ.findall(source.read_text(encoding="utf-8")))
    return frozenset(found)


@dataclass
class Replayed:
    exchange: Exchange
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    problems: list[str] = field(default_factory=list)
    served: bool = True


def local_target(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def answer_body(outcome: Outcome) -> Any:
    if not outcome.body:
        return ""
    if outcome.headers.get("Content-Type", "").startswith("application/json"):
        return json.loads(outcome.body)
    return outcome.body.decode("utf-8", errors="replace")


def serves(app: SandboxApp, method: str, target: str) -> bool:
    """Whether the stand-in implements the operation a recorded request names."""
    path = repo_ids.canonical_path(app.world, urlsplit(target).path)
    if path == "/graphql":
        return True
    op = app.spec.match(method, path) if path is not None else None
    return op is not None and op.operation_id in HANDLERS


def replay(
    scenario: str, exchanges: Iterable[Exchange], *, reads: Collection[str]
) -> list[Replayed]:
    """The scenario's exchanges, each replayed or marked not served."""
    world = seed(scenario)
    if world is None:
        return []
    app = SandboxApp(strict=True)
    app.load(world)
    rewrites = REWRITES.get(scenario, {})
    followed: dict[str, str] = {}  # a URL GitHub gave -> the one the stand-in gave
    made: dict[str, str] = {}  # the id of what GitHub created -> the stand-in's id
    results: list[Replayed] = []
    for exchange in exchanges:
        target = followed_target(followed, exchange.target)
        path, mark, query = target.partition("?")
        target = "/".join(made.get(part, part) for part in path.split("/")) + mark + query
        for old, new in rewrites.items():
            target = target.replace(old, new)
        if not serves(app, exchange.method, target):
            results.append(Replayed(exchange, served=False))
            continue
        outcome = app.handle(exchange.method, target, request_headers(exchange), request(exchange))
        assert isinstance(outcome, Outcome)  # no faults are set
        headers = {k.lower(): v for k, v in outcome.headers.items()}
        body = answer_body(outcome)
        problems = differences(exchange, outcome.status, headers, body, reads=reads)
        problems += [f"OpenAPI: {v['message']}" for v in app.violations]
        app.violations.clear()
        results.append(Replayed(exchange, outcome.status, headers, body, problems))
        follow(followed, exchange, headers)
        if exchange.status == 201 and isinstance(exchange.body, dict) and isinstance(body, dict):
            made[str(exchange.body.get("id"))] = str(body.get("id"))
    return results


def followed_target(followed: dict[str, str], target: str) -> str:
    """``target`` where the stand-in's own URLs lead: a URL GitHub gave (a page, a new
    object's Location) and every path below it."""
    if target in followed:
        return followed[target]
    for given, mine in followed.items():
        if "?" not in given and target.startswith(given + "/"):
            return mine + target[len(given) :]
    return target


def request_headers(exchange: Exchange) -> dict[str, str]:
    headers = {"Accept": exchange.request_headers.get("accept", "application/vnd.github+json")}
    token = exchange.request_headers.get("authorization", "").partition(" ")[2]
    if token:
        headers["Authorization"] = f"token {token}"
    if exchange.request_body is not None:
        headers["Content-Type"] = "application/json"
    return headers


def request(exchange: Exchange) -> bytes:
    if exchange.request_body is None:
        return b""
    return json.dumps(exchange.request_body).encode()


def follow(followed: dict[str, str], exchange: Exchange, headers: dict[str, str]) -> None:
    """Remember where the stand-in's ``Link`` rels and ``Location`` point, by the URLs
    GitHub gave for them in the recording."""
    mine = dict(links(headers.get("link")))
    for rel, url in links(exchange.headers.get("link")):
        if rel in mine:
            followed[local_target(url)] = local_target(mine[rel])
    if "location" in exchange.headers and "location" in headers:
        followed[local_target(exchange.headers["location"])] = local_target(headers["location"])
