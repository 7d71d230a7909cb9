"""An exchange with GitHub in the recordings' normalised form (pure).

``@octokit/fixtures`` stores each request and answer as nock records them, then
normalises what differs between runs or identifies people: the host is
api.github.com, every id counts up from 1000 in order of appearance (the same id
maps to the same number everywhere, URLs included), node ids, times, ETags and
request ids are constants, the token is zeroed, and the accounts are fixture
names. ``tusk record`` writes its exchanges this way so the recorded-truth tests
(``tusk.sandbox.recorded``) read them exactly as they read Octokit's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

API = "https://api.github.com"
TIME = "2017-10-10T16:00:00Z"
HTTP_TIME = "Tue, 10 Oct 2017 16:00:00 GMT"
NODE_ID = "MDA6RW50aXR5MQ=="
TOKEN = "token " + "0" * 39 + "1"
ISO_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")
# Headers kept as they were; the others vary by run and are set to constants or dropped.
CONSTANT_HEADERS = {
    "date": HTTP_TIME,
    "last-modified": HTTP_TIME,
    "etag": '"00000000000000000000000000000000"',
    "x-github-request-id": "0000:00000:0000000:0000000:00000000",
    "x-ratelimit-remaining": "4999",
    "x-ratelimit-reset": "1507651200",
    "x-ratelimit-used": "1",
}
DROPPED_HEADERS = {"set-cookie", "server", "content-length", "x-github-api-version-selected"}


@dataclass
class Normaliser:
    """One scenario's normalisation: the names and ids met so far keep their mapping."""

    api_url: str  # where the exchanges really went (GitHub, or a local GitHub in tests)
    names: Mapping[str, str]  # real login or repository name -> fixture name
    ids: dict[int, int] = field(default_factory=dict)

    def new_id(self, value: int) -> int:
        if value not in self.ids:
            self.ids[value] = 1000 + len(self.ids)
        return self.ids[value]

    def text(self, value: str) -> str:
        value = value.replace(self.api_url.rstrip("/"), API)
        for real, fixture in self.names.items():
            value = re.sub(
                rf"(?<![A-Za-z0-9_.-]){re.escape(real)}(?![A-Za-z0-9_-])", fixture, value
            )
        # Ids in URLs: /issues/comments/123456 -> the number that id maps to.
        return re.sub(
            r"(?<=/)([0-9]{4,})(?=[/?#]|$)", lambda m: str(self.ids.get(int(m[1]), m[1])), value
        )

    def value(self, value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            # Ids first, so URLs in the same object already know them.
            for name in ("id", "databaseId"):
                if isinstance(value.get(name), int) and not isinstance(value.get(name), bool):
                    self.new_id(value[name])
            return {k: self.value(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v, key) for v in value]
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, int):
            return (
                self.new_id(value) if key in ("id", "databaseId") or key.endswith("_id") else value
            )
        if isinstance(value, str):
            if key == "id" and value.isdigit():  # a notification thread's id
                return str(self.new_id(int(value)))
            if key in ("node_id", "nodeId", "id") and value:
                return NODE_ID
            if ISO_TIME.match(value):
                return TIME
            return self.text(value)
        return value

    def headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for name, value in sorted(headers.items()):
            name = name.lower()
            if name in DROPPED_HEADERS:
                continue
            out[name] = CONSTANT_HEADERS.get(name, self.text(value))
        return out

    def exchange(
        self,
        method: str,
        url: str,
        request_headers: Mapping[str, str],
        request_body: Any,
        status: int,
        headers: Mapping[str, str],
        body: Any,
    ) -> dict[str, Any]:
        """One nock record, as in ``normalized-fixture.json``."""
        answer = self.value(body)  # first: the answer's ids name the URLs
        parts = urlsplit(url)
        target = self.text(parts.path + (f"?{parts.query}" if parts.query else ""))
        sent = {k.lower(): v for k, v in request_headers.items()}
        sent["host"] = "api.github.com"
        if "authorization" in sent:
            sent["authorization"] = TOKEN
        for name in ("if-modified-since",):
            if name in sent:
                sent[name] = HTTP_TIME
        return {
            "scope": "https://api.github.com:443",
            "method": method.lower(),
            "path": target,
            "body": self.value(request_body) if request_body is not None else "",
            "status": status,
            "reqheaders": dict(sorted(sent.items())),
            "responseIsBinary": False,
            "response": answer if answer is not None else "",
            "headers": self.headers(headers),
        }
