"""Recordings of real api.github.com exchanges, and how an answer is held to one.

The recordings are ``@octokit/fixtures`` (npm, a devDependency: the Octokit team's
real requests and answers, normalised: ids from 1000, times 2017-10-10T16:00:00Z,
tokens zeroed) plus Tusk's own corpus in the same form (``RECORDINGS``, written by
``tusk record`` for what the Octokit set lacks). ``differences`` is the verdict
of the recorded-truth tests (``tusk.sandbox.recorded_replay`` replays them): the
status, the headers Tusk reads, the form of ``Link`` and ``Location`` URLs, error
bodies, and the keys and JSON types of the body's fields Tusk reads. Pure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tusk.sandbox.spec import find_node_modules

# Tusk's own recordings, one folder per scenario as in @octokit/fixtures.
RECORDINGS = Path(__file__).with_name("recordings")
OCTOKIT = Path("@octokit/fixtures/scenarios/api.github.com")
FIXTURE = "normalized-fixture.json"

# Headers Tusk reads (the gateway, the notifications reader, the claim's read-back),
# and the paths it reads them on (None: everywhere). Last-Modified is read only from
# the notifications listing, for its next If-Modified-Since.
READ_HEADERS: dict[str, str | None] = {
    "link": None,
    "location": None,
    "retry-after": None,
    "x-poll-interval": "/notifications",
    "last-modified": "/notifications",
}


@dataclass(frozen=True)
class Exchange:
    """One recorded request and GitHub's answer."""

    scenario: str
    index: int
    method: str  # upper case
    target: str  # path and query, as sent
    status: int
    request_headers: Mapping[str, str]
    request_body: Any
    headers: Mapping[str, str]  # lower-case names
    body: Any

    @property
    def path(self) -> str:
        return urlsplit(self.target).path

    @property
    def name(self) -> str:
        return f"{self.scenario}#{self.index} {self.method} {self.path} {self.status}"


@dataclass
class Recordings:
    scenarios: dict[str, list[Exchange]] = field(default_factory=dict)

    def exchanges(self) -> Iterable[Exchange]:
        for name in sorted(self.scenarios):
            yield from self.scenarios[name]


def exchange_from(scenario: str, index: int, raw: Mapping[str, Any]) -> Exchange:
    """One entry of a ``normalized-fixture.json`` (nock's recording format)."""
    headers = {str(k).lower(): str(v) for k, v in (raw.get("headers") or {}).items()}
    request_headers = {str(k).lower(): str(v) for k, v in (raw.get("reqheaders") or {}).items()}
    return Exchange(
        scenario=scenario,
        index=index,
        method=str(raw["method"]).upper(),
        target=str(raw["path"]),
        status=int(raw["status"]),
        request_headers=request_headers,
        request_body=raw.get("body") if raw.get("body") != "" else None,
        headers=headers,
        body=raw.get("response"),
    )


def load_folder(root: Path) -> dict[str, list[Exchange]]:
    found: dict[str, list[Exchange]] = {}
    for fixture in sorted(root.glob(f"*/{FIXTURE}")):
        scenario = fixture.parent.name
        entries = json.loads(fixture.read_text(encoding="utf-8"))
        found[scenario] = [exchange_from(scenario, i, e) for i, e in enumerate(entries)]
    return found


def load_recordings(node_modules: Path | None = None, own: Path = RECORDINGS) -> Recordings:
    """The Octokit recordings and Tusk's own (same name: Tusk's wins, it is newer)."""
    octokit = (node_modules or find_node_modules()) / OCTOKIT
    if not octokit.is_dir():
        raise FileNotFoundError(f"{octokit} is missing: run `npm ci` (a devDependency)")
    return Recordings({**load_folder(octokit), **load_folder(own)})


# --------------------------------------------------------------------------- the verdict

ID_SEGMENT = re.compile(r"/repositories/[0-9]+")


def url_form(url: str) -> tuple[str, tuple[str, ...]]:
    """What a ``Link`` or ``Location`` URL says beyond host and ids: its path with a
    repository's id and other numbers blanked, and its query's names and ``page``."""
    parts = urlsplit(url)
    path = ID_SEGMENT.sub("/repositories/{id}", parts.path)
    path = re.sub(r"/[0-9]+(?=/|$)", "/{n}", path)
    query = tuple(f"{k}={v}" if k in ("page", "per_page") else k for k, v in parse_qsl(parts.query))
    return path, query


def links(value: str | None) -> list[tuple[str, str]]:
    """A ``Link`` header's (rel, URL) pairs, in the order they were sent."""
    return [(rel, url) for url, rel in re.findall(r'<([^>]*)>\s*;\s*rel="([^"]+)"', value or "")]


def link_rels(value: str | None) -> list[tuple[str, tuple[str, tuple[str, ...]]]]:
    """A ``Link`` header's (rel, URL form) pairs, in the order GitHub sent them."""
    return [(rel, url_form(url)) for rel, url in links(value)]


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


def body_differences(
    recorded: Any, answered: Any, reads: Collection[str], where: str = "body"
) -> list[str]:
    """Where ``answered`` differs from ``recorded`` in a field Tusk reads: present in one
    and not the other, or of another JSON type (a null on either side is a value the
    state decides, not a shape)."""
    problems: list[str] = []
    if isinstance(recorded, dict) and isinstance(answered, dict):
        for key in sorted(set(recorded) | set(answered)):
            if key not in reads:
                continue
            here = f"{where}.{key}"
            if key not in answered:
                problems.append(f"{here}: GitHub sends it, the stand-in does not")
            elif key not in recorded:
                problems.append(f"{here}: the stand-in sends it, GitHub does not")
            else:
                problems += body_differences(recorded[key], answered[key], reads, here)
        return problems
    if isinstance(recorded, list) and isinstance(answered, list):
        if recorded and answered:
            problems += body_differences(recorded[0], answered[0], reads, f"{where}[0]")
        return problems
    kinds = json_type(recorded), json_type(answered)
    if "null" not in kinds and kinds[0] != kinds[1]:
        problems.append(f"{where}: GitHub answers {kinds[0]}, the stand-in {kinds[1]}")
    return problems


def error_differences(recorded: Any, answered: Any) -> list[str]:
    """An error body: GitHub's message and each ``errors[]`` entry's resource, field, code."""
    if not isinstance(recorded, dict) or "message" not in recorded:
        return []
    if not isinstance(answered, dict):
        return [f"error body: GitHub answers {recorded!r}, the stand-in {answered!r}"]

    def gist(body: Mapping[str, Any]) -> Any:
        errors = [
            {k: e.get(k) for k in ("resource", "field", "code")} if isinstance(e, dict) else e
            for e in body.get("errors") or []
        ]
        return {"message": body.get("message"), "errors": errors}

    if gist(recorded) != gist(answered):
        return [f"error body: GitHub answers {gist(recorded)}, the stand-in {gist(answered)}"]
    return []


def media_type(headers: Mapping[str, str]) -> str:
    return headers.get("content-type", "").split(";")[0].strip()


def differences(
    recorded: Exchange,
    status: int,
    headers: Mapping[str, str],
    body: Any,
    *,
    reads: Collection[str],
) -> list[str]:
    """Every way the stand-in's answer differs from GitHub's recorded one that Tusk
    could notice. Empty: the stand-in answered as GitHub did."""
    headers = {k.lower(): v for k, v in headers.items()}
    if status != recorded.status:
        return [f"status: GitHub answers {recorded.status}, the stand-in {status}"]
    problems: list[str] = []
    for name, only in READ_HEADERS.items():
        if only is not None and recorded.path != only:
            continue
        if (name in recorded.headers) != (name in headers):
            side = "GitHub" if name in recorded.headers else "the stand-in"
            problems.append(f"header {name}: only {side} sends it")
    if link_rels(recorded.headers.get("link")) != link_rels(headers.get("link")):
        problems.append(
            f"Link: GitHub sends {link_rels(recorded.headers.get('link'))}, "
            f"the stand-in {link_rels(headers.get('link'))}"
        )
    if "location" in recorded.headers and "location" in headers:
        want, got = url_form(recorded.headers["location"]), url_form(headers["location"])
        if want != got:
            problems.append(f"Location: GitHub points at {want}, the stand-in at {got}")
    if recorded.body not in (None, "") and media_type(recorded.headers) != media_type(headers):
        problems.append(
            f"Content-Type: GitHub answers {media_type(recorded.headers)}, "
            f"the stand-in {media_type(headers)}"
        )
    if status >= 400:
        return problems + error_differences(recorded.body, body)
    return problems + body_differences(recorded.body, body, reads)
