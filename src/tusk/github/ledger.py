"""The request ledger: every request the gateway sends, counted per route.

Benchmarks and tests read it (API requests per trigger, per idle poll); a 304
answer to a conditional request is counted apart, since GitHub does not count
it against the rate limit.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import urlsplit


def route_of(method: str, path: str) -> str:
    """Normalise a request path into a route template for counting.

    ``/repos/alice/widgets/issues/12/comments`` → ``GET /repos/{owner}/{repo}/issues/{n}/comments``.
    ``/repositories/42/issues`` (the form of GitHub's ``Link`` pages and redirects) is
    the same operation and counts under ``GET /repos/{owner}/{repo}/issues``.
    """
    parts = [p for p in urlsplit(path).path.split("/") if p]
    if parts[:1] == ["api"] and parts[1:2] == ["v3"]:  # GitHub Enterprise Server prefix
        parts = parts[2:]
    if parts[:1] == ["repositories"] and parts[1:2] and parts[1].isdigit():
        parts = ["repos", "{owner}", "{repo}", *parts[2:]]
    out = []
    for index, part in enumerate(parts):
        if index in (1, 2) and parts[0] == "repos":
            out.append("{owner}" if index == 1 else "{repo}")
        elif index == 1 and parts[0] in ("users", "orgs"):
            out.append("{name}")
        elif part.isdigit():
            out.append("{n}")
        else:
            out.append(part)
    return f"{method.upper()} /" + "/".join(out)


@dataclass
class RequestLedger:
    """Requests sent, per route; 304 answers are counted apart (they are free)."""

    by_route: Counter[str] = field(default_factory=Counter)
    not_modified: Counter[str] = field(default_factory=Counter)
    retries: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record_retry(self) -> None:
        with self._lock:
            self.retries += 1

    def record(self, route: str, status: int | None) -> None:
        with self._lock:
            if status == 304:
                self.not_modified[route] += 1
            else:
                self.by_route[route] += 1

    @property
    def total(self) -> int:
        return sum(self.by_route.values())

    @property
    def total_not_modified(self) -> int:
        return sum(self.not_modified.values())

    def reset(self) -> None:
        with self._lock:
            self.by_route.clear()
            self.not_modified.clear()
            self.retries = 0
