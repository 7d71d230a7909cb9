"""GraphQL connections over the local GitHub's lists: ``first``/``after``/``last``/
``before`` with GitHub's cursors and its page limit of 100."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from tusk.sandbox.world import SandboxError

MAX_PAGE = 100


def _cursor(index: int) -> str:
    return base64.b64encode(f"cursor:v2:{index}".encode()).decode()


def _index(cursor: str | None) -> int | None:
    if cursor is None:
        return None
    try:
        return int(base64.b64decode(cursor).decode().rsplit(":", 1)[1])
    except (ValueError, IndexError):
        raise SandboxError(422, f"`{cursor}` does not appear to be a valid cursor.") from None


def connection(
    items: list[Any], args: dict[str, Any], build: Callable[[Any], Any]
) -> dict[str, Any]:
    """A GraphQL connection over ``items`` honouring ``first``/``after``/``last``/``before``."""
    first, last = args.get("first"), args.get("last")
    if first is None and last is None:
        raise SandboxError(
            422, "You must provide a `first` or `last` value to properly paginate the connection."
        )
    for name, value in (("first", first), ("last", last)):
        if value is not None and not 0 <= value <= MAX_PAGE:
            raise SandboxError(
                422,
                f"Requesting {value} records on the connection exceeds "
                f"the `{name}` limit of 100 records.",
            )
    start, end = 0, len(items)
    after, before = _index(args.get("after")), _index(args.get("before"))
    if after is not None:
        start = after + 1
    if before is not None:
        end = min(end, before)
    if first is not None:
        end = min(end, start + first)
    if last is not None:
        start = max(start, end - last)
    window = list(range(start, max(start, end)))
    nodes = [build(items[i]) for i in window]
    return {
        "__typename": "Connection",
        "totalCount": len(items),
        "nodes": nodes,
        "edges": [{"cursor": _cursor(i), "node": n} for i, n in zip(window, nodes, strict=True)],
        "pageInfo": {
            "hasNextPage": end < len(items),
            "hasPreviousPage": start > 0,
            "startCursor": _cursor(window[0]) if window else None,
            "endCursor": _cursor(window[-1]) if window else None,
        },
    }
