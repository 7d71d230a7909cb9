"""Primary rate-limit accounting: per token and resource, reported in ``x-ratelimit-*`` headers."""

from __future__ import annotations

import time
from typing import Any

LIMITS = {"core": 5000, "search": 30, "graphql": 5000}
WINDOW = 3600


def resource_for(path: str) -> str:
    if path.startswith("/search/"):
        return "search"
    if path == "/graphql":
        return "graphql"
    return "core"


def _reset(resource: str) -> int:
    window = 60 if resource == "search" else WINDOW
    now = int(time.time())
    return now - now % window + window


def spend(world: Any, who: str, resource: str) -> None:
    """Count one request (a 304 is never counted, as on GitHub)."""
    key = (who, resource, _reset(resource))
    world.rate_used[key] = world.rate_used.get(key, 0) + 1


def headers(world: Any, who: str, resource: str) -> dict[str, str]:
    reset = _reset(resource)
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
