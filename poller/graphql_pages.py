"""Fetch a GraphQL document and every page of every connection in it, to the end.

A query is built from ``Conn`` specs. The first request fetches the first
page of every connection; each later request fetches the next page of every
connection that still has one, batched into one document (aliases), so the
request count stays at the floor of one page per 100 items per connection.
Connections under the thread are followed by their path; nested ones (a
review's comments, a reply list) through ``node(id:)``.

Errors on fields marked optional (e.g. branch protection, which needs admin
rights) are kept as notes instead of failing the fetch: the context says what
was not visible.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tusk.github import Gateway, GitHubError

PAGE = 100
BATCH = 20  # follow-up connections per request; keeps each document small
PAGE_INFO = "pageInfo { hasNextPage endCursor }"


@dataclass(frozen=True)
class Conn:
    """A connection field: its arguments, what each node selects, nested connections."""

    name: str
    node_type: str
    fields: str
    args: str = ""
    children: tuple[Conn, ...] = ()
    page: int = PAGE

    def render(self, *, after_var: str | None = None) -> str:
        args = [f"first: {self.page}"]
        if self.args:
            args.append(self.args)
        if after_var:
            args.append(f"after: ${after_var}")
        inner = " ".join(child.render() for child in self.children)
        node_id = "id " if self.children else ""
        return (
            f"{self.name}({', '.join(args)}) {{ {PAGE_INFO} "
            f"nodes {{ {node_id}{self.fields} {inner} }} }}"
        )


@dataclass(frozen=True)
class Locator:
    """How to reach a connection's owner again: a path from the query root.

    ``open`` is the text before the connection (ending inside the owner's
    selection), ``variables`` its variable declarations and values.
    """

    open: str
    close: str
    declarations: Mapping[str, str] = field(default_factory=dict)
    values: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class Pending:
    locator: Locator
    conn: Conn
    cursor: str
    target: list[Any]


@dataclass
class Result:
    data: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    requests: int = 0


def node_locator(node_id: str, node_type: str) -> Locator:
    return Locator(
        open=f"node(id: $ID) {{ ... on {node_type} {{",
        close="} }",
        declarations={"ID": "ID!"},
        values={"ID": node_id},
    )


def run_query(
    gateway: Gateway, query: str, variables: Mapping[str, Any], *, optional: frozenset[str]
) -> tuple[dict[str, Any], list[str]]:
    """POST one GraphQL document. Errors on ``optional`` top-level paths become notes."""
    response = gateway.request(
        "POST", gateway.graphql_url, json={"query": query, "variables": dict(variables)}
    )
    body = response.body if isinstance(response.body, dict) else {}
    notes = []
    fatal = []
    for error in body.get("errors") or []:
        path = [str(part) for part in error.get("path") or []]
        message = str(error.get("message", error))
        if path and any(".".join(path).startswith(prefix) for prefix in optional):
            notes.append(f"{'.'.join(path)}: not visible to the bot ({message})")
        else:
            fatal.append(message)
    if fatal or body.get("data") is None:
        raise GitHubError(
            "the GraphQL query failed",
            status=response.status,
            method="POST",
            path="/graphql",
            github_message="; ".join(fatal) or "no data in the response",
        )
    return dict(body["data"]), notes


def flatten(
    owner: dict[str, Any], conns: tuple[Conn, ...], locator: Locator | None
) -> list[Pending]:
    """Replace each connection object in ``owner`` by its node list; return what needs more pages.

    ``locator`` reaches ``owner`` again for follow-ups; nested nodes are reached
    by ``node(id:)``.
    """
    pending: list[Pending] = []
    for conn in conns:
        value = owner.get(conn.name)
        if not isinstance(value, dict):
            continue
        nodes = [node for node in value.get("nodes") or [] if node is not None]
        owner[conn.name] = nodes
        info = value.get("pageInfo") or {}
        if info.get("hasNextPage") and locator is not None:
            pending.append(Pending(locator, conn, str(info.get("endCursor")), nodes))
        pending.extend(_flatten_children(nodes, conn))
    return pending


def _flatten_children(nodes: list[Any], conn: Conn) -> list[Pending]:
    pending: list[Pending] = []
    if not conn.children:
        return pending
    for node in nodes:
        node_id = node.get("id")
        locator = node_locator(node_id, conn.node_type) if node_id else None
        pending.extend(flatten(node, conn.children, locator))
    return pending


def follow(gateway: Gateway, pending: list[Pending], *, optional: frozenset[str]) -> Result:
    """Fetch the remaining pages of ``pending`` connections, batching them per request."""
    result = Result(data={})
    queue = list(pending)
    while queue:
        batch, queue = queue[:BATCH], queue[BATCH:]
        declarations: dict[str, str] = {}
        values: dict[str, Any] = {}
        parts = []
        for index, item in enumerate(batch):
            renamed_open = item.locator.open
            renamed_close = item.locator.close
            for name, kind in item.locator.declarations.items():
                new = f"{name}{index}"
                renamed_open = re.sub(rf"\${name}\b", f"${new}", renamed_open)
                declarations[new] = kind
                values[new] = item.locator.values[name]
            cursor_var = f"after{index}"
            declarations[cursor_var] = "String"
            values[cursor_var] = item.cursor
            parts.append(
                f"f{index}: {renamed_open} {item.conn.render(after_var=cursor_var)} {renamed_close}"
            )
        header = ", ".join(f"${name}: {kind}" for name, kind in declarations.items())
        query = f"query({header}) {{ {' '.join(parts)} }}"
        data, notes = run_query(gateway, query, values, optional=optional)
        result.requests += 1
        result.notes.extend(notes)
        for index, item in enumerate(batch):
            owner = _descend(data.get(f"f{index}"))
            if owner is None:
                raise GitHubError(
                    f"a follow-up page of {item.conn.name} came back empty",
                    method="POST",
                    path="/graphql",
                )
            more = flatten(owner, (item.conn,), item.locator)
            fresh = owner[item.conn.name]
            item.target.extend(fresh)
            for entry in more:
                if entry.target is fresh:
                    entry.target = item.target
            queue.extend(more)
    return result


def _descend(value: Any) -> dict[str, Any] | None:
    """Walk down single-key objects to the one that holds the connection."""
    while isinstance(value, dict):
        keys = [key for key in value if key != "__typename"]
        if len(keys) == 1 and isinstance(value[keys[0]], dict) and "nodes" not in value[keys[0]]:
            value = value[keys[0]]
            continue
        return value
    return None


def compact(query: str) -> str:
    """Collapse whitespace (the request body stays small and the journal readable)."""
    return " ".join(query.split())


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
