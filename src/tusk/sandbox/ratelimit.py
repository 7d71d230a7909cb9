"""Primary rate-limit accounting: per token and resource, reported in ``x-ratelimit-*`` headers.

Windows run on the sandbox's wall clock (``World.wall``), which tests may move
forward. GraphQL spends the query's computed cost in points, not one per
request (tusk.sandbox.graphql_cost).
"""

from __future__ import annotations

from typing import Any

LIMITS = {"core": 5000, "search": 30, "graphql": 5000}
WINDOW = 3600


# GitHub: "Accessing this endpoint does not count against your REST API rate limit."
UNCOUNTED_PATHS = frozenset({"/rate_limit"})


def resource_for(path: str) -> str:
    if path.startswith("/search/"):
        return "search"
    if path == "/graphql":
        return "graphql"
    return "core"


def _reset(world: Any, resource: str) -> int:
    window = 60 if resource == "search" else WINDOW
    now = int(world.wall())
    return now - now % window + window


def spend(world: Any, who: str, resource: str, amount: int = 1) -> None:
    """Count one request, or ``amount`` GraphQL points (a 304 is never counted, as on GitHub)."""
    key = (who, resource, _reset(world, resource))
    world.rate_used[key] = world.rate_used.get(key, 0) + amount


def remaining(world: Any, who: str, resource: str) -> int:
    return int(headers(world, who, resource)["x-ratelimit-remaining"])


def exhausted(world: Any, who: str, resource: str) -> bool:
    """Whether ``who`` has used up ``resource`` in this window (GitHub then answers 403)."""
    return headers(world, who, resource)["x-ratelimit-remaining"] == "0"


def exceeded_message(who: str) -> str:
    if who == "":
        return "API rate limit exceeded for 127.0.0.1."
    return f"API rate limit exceeded for token {who}."


def headers(world: Any, who: str, resource: str) -> dict[str, str]:
    reset = _reset(world, resource)
    used = world.rate_used.get((who, resource, reset), 0)
    limit = LIMITS[resource] if who != "" else 60
    return {
        "x-ratelimit-limit": str(limit),
        "x-ratelimit-remaining": str(max(limit - used, 0)),
        "x-ratelimit-used": str(used),
        "x-ratelimit-reset": str(reset),
        "x-ratelimit-resource": resource,
    }


def overview(call: Any) -> dict[str, Any]:
    who = call.token.name if call.token else ""
    resources = {}
    for resource in LIMITS:
        values = headers(call.world, who, resource)
        resources[resource] = {
            "limit": int(values["x-ratelimit-limit"]),
            "remaining": int(values["x-ratelimit-remaining"]),
            "used": int(values["x-ratelimit-used"]),
            "reset": int(values["x-ratelimit-reset"]),
        }
    return {"resources": resources, "rate": resources["core"]}
