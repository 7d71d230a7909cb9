"""Fetch a GraphQL document and every page of every connection in it, to the end.

A query is built from ``Conn`` specs. The first request fetches the first
page of every connection; each later request fetches the next page of every
connection that still has one, batched into one document (aliases), so the
request count stays at the floor of one page per 100 items per connection.
Every connection is followed by its path from the query root; a nested one
(a review's comments, a comment's replies) through its parent's position in
the parent connection (``first: 1, after: <the cursor before it>``), which
needs no ``node(id:)`` lookup.

Errors on paths marked optional (the bot's fork, which may not exist) are
kept as notes instead of failing the fetch: the context says what was not
visible.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tusk.github.gateway import Gateway, GitHubError

PAGE = 100
BATCH = 20  # follow-up connections per request; keeps each document small
PAGE_INFO = "pageInfo { hasNextPage endCursor }"


@dataclass(frozen=True)
class Conn:
    """A connection field: its arguments, what each node selects, nested connections."""

    name: str
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
        # Cursors only where nested connections may need to be reached again.
        edges = "edges { cursor } " if self.children else ""
        return (
            f"{self.name}({', '.join(args)}) {{ {PAGE_INFO} {edges}"
            f"nodes {{ {self.fields} {inner} }} }}"
        )


@dataclass(frozen=True)
class Locator:
    """How to reach a connection's owner again: a path from the query root.

    ``open`` is the text before the connection (ending inside the owner's
    selection), ``close`` the braces after it; ``declarations`` and ``values``
    are the GraphQL variables the path uses.
    """

    open: str
    close: str
    declarations: Mapping[str, str] = field(default_factory=dict)
    values: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class Pending:
    """A connection with more pages: where it is, from which cursor, and the list to extend."""

    locator: Locator
    conn: Conn
    cursor: str
    target: list[Any]


def child_locator(parent: Locator, conn: Conn, before: str | None) -> Locator:
    """Reach the node that follows cursor ``before`` in ``conn`` under ``parent``."""
    args = ["first: 1"]
    declarations = dict(parent.declarations)
    values = dict(parent.values)
    if conn.args:
        args.append(conn.args)
    if before is not None:
        var = f"p{len(declarations)}"
        args.append(f"after: ${var}")
        declarations[var] = "String"
        values[var] = before
    return Locator(
        open=f"{parent.open} {conn.name}({', '.join(args)}) {{ nodes {{",
        close=f"}} }} {parent.close}",
        declarations=declarations,
        values=values,
    )


@dataclass
class Result:
    notes: list[str] = field(default_factory=list)
    requests: int = 0


def run_query(
    gateway: Gateway, query: str, variables: Mapping[str, Any], *, optional: frozenset[str]
) -> tuple[dict[str, Any], list[str]]:
    """POST one GraphQL document. Errors on ``optional`` top-level paths become notes."""
    response = gateway.graphql_response(query, variables)  # waits out RATE_LIMITED
    body = response.body if isinstance(response.body, dict) else {}
    notes = []
    fatal: list[dict[str, Any]] = []
    for error in body.get("errors") or []:
        path = [str(part) for part in error.get("path") or []]
        message = str(error.get("message", error))
        if path and any(".".join(path).startswith(prefix) for prefix in optional):
            notes.append(f"{'.'.join(path)}: not visible to the bot ({message})")
        else:
            fatal.append(error)
    if fatal or body.get("data") is None:
        raise GitHubError(
            "the GraphQL query failed",
            status=response.status,
            method="POST",
            path="/graphql",
            github_message="; ".join(str(e.get("message", e)) for e in fatal)
            or "no data in the response",
            errors=fatal,
        )
    return dict(body["data"]), notes


def flatten(
    owner: dict[str, Any],
    conns: tuple[Conn, ...],
    locator: Locator,
    *,
    after: str | None = None,
) -> list[Pending]:
    """Replace each connection object in ``owner`` by its node list; return what needs more pages.

    ``locator`` reaches ``owner`` again; ``after`` is the cursor this page of
    ``owner``'s connection was asked from (None for a first page).
    """
    pending: list[Pending] = []
    for conn in conns:
        value = owner.get(conn.name)
        if not isinstance(value, dict):
            continue
        raw_nodes = value.get("nodes") or []
        cursors = [(edge or {}).get("cursor") for edge in value.get("edges") or []]
        nodes = [node for node in raw_nodes if node is not None]
        owner[conn.name] = nodes
        info = value.get("pageInfo") or {}
        if info.get("hasNextPage"):
            pending.append(Pending(locator, conn, str(info.get("endCursor")), nodes))
        if conn.children:
            previous = after
            for index, node in enumerate(raw_nodes):
                if node is not None:
                    reach = child_locator(locator, conn, previous)
                    pending.extend(flatten(node, conn.children, reach))
                previous = cursors[index] if index < len(cursors) else None
    return pending


def follow(gateway: Gateway, pending: list[Pending], *, optional: frozenset[str]) -> Result:
    """Fetch the remaining pages of ``pending`` connections, batching them per request."""
    result = Result()
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
            owner = _descend(data.get(f"f{index}"), item.conn.name)
            if owner is None:
                raise GitHubError(
                    f"a follow-up page of {item.conn.name} came back empty",
                    method="POST",
                    path="/graphql",
                )
            more = flatten(owner, (item.conn,), item.locator, after=item.cursor)
            fresh = owner[item.conn.name]
            item.target.extend(fresh)
            for entry in more:
                if entry.target is fresh:
                    entry.target = item.target
            queue.extend(more)
    return result


def _descend(value: Any, name: str) -> dict[str, Any] | None:
    """Walk a follow-up answer down its locator path to the object holding ``name``.

    Each step has one field; a connection on the way was asked with
    ``first: 1`` and is entered through its only node.
    """
    while isinstance(value, dict):
        if name in value:
            return value
        keys = [key for key in value if key != "__typename"]
        if len(keys) != 1:
            return None
        value = value[keys[0]]
        if isinstance(value, dict) and isinstance(value.get("nodes"), list):
            nodes = [node for node in value["nodes"] if node is not None]
            value = nodes[0] if nodes else None
    return None


def compact(query: str) -> str:
    """Collapse whitespace (the request body stays small and the journal readable)."""
    return " ".join(query.split())
