"""``tusk record``: record real GitHub exchanges the recordings lack.

``@octokit/fixtures`` records what Octokit needs; Tusk also depends on a
conditional notifications poll, issue comments, reactions, reviews, GraphQL
discussions and ``repository_dispatch``. With a classic token of an account that
may write to ``--repo`` (a scratch repository: the recorder opens and closes an
issue there and comments on it), this sends those requests once each, through the
gateway, and writes every exchange in the recordings' normalised form
(``tusk.cli.record_form``) as ``<out>/<scenario>/normalized-fixture.json``, the
layout the recorded-truth tests read (``tusk.sandbox.recorded``). A scenario is
replayed once it has a seed in ``tusk.sandbox.recorded_seeds``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from tusk.cli.record_form import Normaliser
from tusk.contracts.config import load_secrets
from tusk.github.gateway import Gateway, gateway_from_secrets

EVERY_ERROR = tuple(range(400, 600))
DISCUSSIONS = """query($owner: String!, $name: String!) {
  repository(owner: $owner, name: $name) {
    discussions(first: 2) { totalCount nodes { id number title body
      author { login } comments(first: 5) { nodes { id databaseId body author { login } } } } }
  }
}"""


@dataclass
class Recorder:
    """The exchanges of one scenario, sent through the gateway and kept normalised."""

    gateway: Gateway
    form: Normaliser
    entries: list[dict[str, Any]] = field(default_factory=list)

    def send(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        json_body: Any = None,
        headers: dict[str, str] | None = None,
        accept: str = "application/vnd.github+json",
    ) -> Any:
        answer = self.gateway.request(
            method,
            path,
            params=params,
            json=json_body,
            headers=headers,
            accept=accept,
            allow_statuses=(304, *EVERY_ERROR),
            follow_redirects=False,
            may_repeat=False,
        )
        url = self.gateway.url_for(path) + (f"?{urlencode(params)}" if params else "")
        sent = {"accept": accept, "authorization": "token", **(headers or {})}
        if json_body is not None:
            sent["content-type"] = "application/json"
        self.entries.append(
            self.form.exchange(
                method, url, sent, json_body, answer.status, answer.headers, answer.body
            )
        )
        return answer


def notifications(r: Recorder, repo: str, pull: int | None) -> None:
    first = r.send("GET", "/notifications", params={"per_page": 50})
    since = first.header("last-modified")
    if since:
        r.send(
            "GET", "/notifications", params={"per_page": 50}, headers={"If-Modified-Since": since}
        )


def comments(r: Recorder, repo: str, pull: int | None) -> None:
    made = r.send(
        "POST", f"/repos/{repo}/issues", json_body={"title": "tusk record", "body": "recording"}
    ).body
    number = made["number"]
    ids = [
        r.send(
            "POST", f"/repos/{repo}/issues/{number}/comments", json_body={"body": f"comment {n}"}
        ).body["id"]
        for n in (1, 2)
    ]
    r.send("GET", f"/repos/{repo}/issues/{number}/comments", params={"per_page": 1})
    r.send("PATCH", f"/repos/{repo}/issues/comments/{ids[0]}", json_body={"body": "edited"})
    r.send(
        "PATCH",
        f"/repos/{repo}/issues/{number}",
        json_body={"state": "closed", "state_reason": "not_planned"},
    )
    r.send("GET", f"/repos/{repo}/issues/{number}")
    r.send("GET", f"/repos/{repo}/issues", params={"state": "closed", "per_page": 1})
    r.send("DELETE", f"/repos/{repo}/issues/comments/{ids[1]}")


def reactions(r: Recorder, repo: str, pull: int | None) -> None:
    made = r.send(
        "POST", f"/repos/{repo}/issues", json_body={"title": "tusk record", "body": "reactions"}
    ).body
    comment = r.send(
        "POST", f"/repos/{repo}/issues/{made['number']}/comments", json_body={"body": "react"}
    ).body["id"]
    path = f"/repos/{repo}/issues/comments/{comment}/reactions"
    reaction = r.send("POST", path, json_body={"content": "eyes"}).body
    r.send("POST", path, json_body={"content": "eyes"})  # 200: it already exists
    r.send("GET", path)
    r.send("DELETE", f"{path}/{reaction['id']}")
    r.send("PATCH", f"/repos/{repo}/issues/{made['number']}", json_body={"state": "closed"})


def reviews(r: Recorder, repo: str, pull: int | None) -> None:
    if pull is None:
        return
    r.send("GET", f"/repos/{repo}/pulls/{pull}")
    r.send("GET", f"/repos/{repo}/pulls/{pull}/reviews")
    r.send("GET", f"/repos/{repo}/pulls/{pull}/comments")


def discussions(r: Recorder, repo: str, pull: int | None) -> None:
    owner, name = repo.split("/")
    r.send(
        "POST",
        "/graphql",
        json_body={"query": DISCUSSIONS, "variables": {"owner": owner, "name": name}},
    )


def dispatches(r: Recorder, repo: str, pull: int | None) -> None:
    r.send(
        "POST",
        f"/repos/{repo}/dispatches",
        json_body={"event_type": "tusk-record", "client_payload": {"recorded": True}},
    )


SCENARIOS: dict[str, Callable[[Recorder, str, int | None], None]] = {
    "tusk-notifications-conditional": notifications,
    "tusk-issue-comments": comments,
    "tusk-reactions": reactions,
    "tusk-reviews": reviews,
    "tusk-graphql-discussions": discussions,
    "tusk-dispatches": dispatches,
}


def record(
    gateway: Gateway,
    *,
    repo: str,
    out: Path,
    pull: int | None = None,
    only: list[str] | None = None,
) -> list[Path]:
    """Record each scenario (``only``: those named) into ``out``; the files written."""
    login = str(gateway.get("/user")["login"])
    owner, name = repo.split("/")
    # The seeds (tusk.sandbox.recorded_seeds) hold both: a scratch repository of the
    # token's own account or of another (an organisation).
    fixture_owner = "tusk-fixture-user" if owner.lower() == login.lower() else "tusk-fixture-org"
    names = {repo: f"{fixture_owner}/record", owner: fixture_owner, name: "record"}
    names = {**names, login: "tusk-fixture-user"}
    written = []
    for scenario, steps in SCENARIOS.items():
        if only and scenario not in only:
            continue
        recorder = Recorder(gateway, Normaliser(gateway.api_url, names))
        steps(recorder, repo, pull)
        if not recorder.entries:
            continue
        target = out / scenario / "normalized-fixture.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(recorder.entries, indent=2) + "\n", encoding="utf-8")
        written.append(target)
    return written


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from tusk.sandbox.recorded import RECORDINGS

    parser.add_argument("--repo", required=True, help="owner/name of a scratch repository")
    parser.add_argument("--pull", type=int, help="a pull request there with reviews to read")
    parser.add_argument("--out", type=Path, default=RECORDINGS, help="where recordings go")
    parser.add_argument(
        "--only", action="append", choices=sorted(SCENARIOS), help="record only these"
    )


def run(args: argparse.Namespace) -> int:
    gateway = gateway_from_secrets(load_secrets(), "bot")
    try:
        written = record(gateway, repo=args.repo, out=args.out, pull=args.pull, only=args.only)
    finally:
        gateway.close()
    for path in written:
        print(path)
    return 0
