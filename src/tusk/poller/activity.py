"""A cheap look at threads the bot read before: is there a new mention since then?

A thread whose notification ``reason`` is ``mention`` keeps it for good
(GitHub: "The reason remains as mention, regardless of whether you're ever
mentioned again", REST docs, "Notification reasons"), so any reply makes an
old mention thread unread again. Before paying a thread's full context (the
repository, the bot's fork and repositories, the diff, every page), one
GraphQL document looks at up to ``BATCH`` such threads at once: each one's
body, comments, reviews and review comments, with the fields ``core.nodes_of``
reads, laid out by ``raw_shape.to_raw`` like the full context. The cycle then
runs the same ``locate_triggers`` on it that it runs on the full context.

Only a thread seen whole is decided by the look. One with a list longer than a
page, an error, or no answer is left to the full context: the look never
drops a mention, it only spares the context of threads without one.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from tusk.contracts.raw_context import RawContext
from tusk.errors import TuskError
from tusk.github.gateway import Gateway
from tusk.poller.context import ACTOR, ISSUE_COMMENTS, REVIEWS, SEEN
from tusk.poller.core import Thread, nodes_of
from tusk.poller.graphql_pages import Conn, Locator, compact, flatten
from tusk.poller.raw_shape import to_raw

log = logging.getLogger(__name__)

BATCH = 10  # threads per request: 10 pull requests stay far under GitHub's node limit
SCALARS = f"id number body url createdAt updatedAt lastEditedAt {ACTOR} {SEEN}"
TYPES = {"issue": "Issue", "pull_request": "PullRequest"}
CONNS: dict[str, tuple[Conn, ...]] = {
    "issue": (ISSUE_COMMENTS,),
    "pull_request": (ISSUE_COMMENTS, REVIEWS),
}
_NOWHERE = Locator(open="", close="")  # pages past the first are never followed here


def lookable(thread: Thread) -> bool:
    return thread.kind in TYPES and thread.number is not None


def look_query(threads: Sequence[Thread]) -> tuple[str, dict[str, Any]]:
    """One document asking for every thread of ``threads`` under aliases ``t0``, ``t1``..."""
    declarations: list[str] = []
    values: dict[str, Any] = {}
    parts: list[str] = []
    for index, thread in enumerate(threads):
        kind = thread.kind or ""
        owner, name = thread.repo.split("/", 1)
        declarations += [f"$o{index}: String!", f"$n{index}: String!", f"$i{index}: Int!"]
        values.update({f"o{index}": owner, f"n{index}": name, f"i{index}": thread.number})
        conns = " ".join(conn.render() for conn in CONNS[kind])
        parts.append(
            f"t{index}: repository(owner: $o{index}, name: $n{index}) {{ "
            f"thread: issueOrPullRequest(number: $i{index}) {{ __typename "
            f"... on {TYPES[kind]} {{ {SCALARS} {conns} }} }} }}"
        )
    return compact(f"query({', '.join(declarations)}) {{ {' '.join(parts)} }}"), values


def seen_whole(thread: Thread, answer: Any) -> RawContext | None:
    """Pure: the thread's ``raw`` (REST layout) when the answer holds all of it, else None."""
    node = (answer or {}).get("thread") if isinstance(answer, dict) else None
    kind = thread.kind
    if not isinstance(node, dict) or kind not in TYPES or node.get("__typename") != TYPES[kind]:
        return None
    if flatten(node, CONNS[kind], _NOWHERE):  # some list has more pages
        return None
    return to_raw(
        kind=kind,
        repo=thread.repo,
        repository={},
        thread=node,
        fork=None,
        viewer={},
        diff=None,
        protection={},
        notes=[],
    )


def decided(batch: Sequence[Thread], body: Any) -> dict[str, RawContext]:
    """Pure: from one look's answer, ``raw`` of each thread of ``batch`` seen whole.

    A thread with an error, or whose answer the layout code cannot read, is left
    out: the full context then fetches it and reports what is wrong."""
    body = body if isinstance(body, dict) else {}
    data = body.get("data") if isinstance(body.get("data"), dict) else {}
    troubled = {
        str((error.get("path") or [""])[0])
        for error in body.get("errors") or []
        if isinstance(error, dict)
    }
    seen: dict[str, RawContext] = {}
    for index, thread in enumerate(batch):
        if f"t{index}" in troubled:
            continue
        try:
            raw = seen_whole(thread, data.get(f"t{index}"))
            if raw is not None:
                nodes_of(raw)  # what the cycle will read: a surprise shows here
        except (LookupError, TypeError, ValueError, AttributeError) as error:
            log.warning("a look at %s %s failed (%s); fetched whole", thread.repo, thread.id, error)
            continue
        if raw is not None:
            seen[thread.id] = raw
    return seen


def look(gateway: Gateway, threads: Sequence[Thread]) -> tuple[dict[str, RawContext], int]:
    """``raw`` of each thread seen whole, by thread id, and the requests spent.

    A failed request leaves its threads undecided; the full context then
    fetches them and reports any error the usual way."""
    seen: dict[str, RawContext] = {}
    wanted = [thread for thread in threads if lookable(thread)]
    requests = 0
    for start in range(0, len(wanted), BATCH):
        batch = wanted[start : start + BATCH]
        query, variables = look_query(batch)
        requests += 1
        try:
            response = gateway.request(
                "POST", gateway.graphql_url, json={"query": query, "variables": variables}
            )
        except TuskError as error:
            log.warning("a look at %d thread(s) failed (%s); fetched whole", len(batch), error)
            continue
        seen.update(decided(batch, response.body))
    return seen, requests
