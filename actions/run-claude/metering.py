"""Token and cost metering of one run's model traffic, and its budget.

Pure and thread-safe. ``UsageTap`` reads the usage out of a response as its
bytes pass (an SSE stream or one JSON body) without holding the body;
``Meter`` adds each finished response to the run's spend and says once when
the spend went past ``agent.max_budget_usd``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from typing import Any

from tusk.pricing import Price, Spend, Usage, cost_usd, price_for, usage_from

MAX_LINE_BYTES = 1 << 20  # an SSE line longer than this is not a usage line: skip it
MAX_JSON_BYTES = 32 << 20  # a plain JSON answer is read for its usage up to this size


class UsageTap:
    """Fed the raw bytes of one response as they pass; knows its model and usage."""

    def __init__(self, *, streaming: bool, request_model: str | None) -> None:
        self.streaming = streaming
        self.model = request_model or ""
        self._start = Usage()
        self._delta: dict[str, Any] = {}
        self._line = bytearray()
        self._skipping = False
        self._json = bytearray()

    def feed(self, chunk: bytes) -> None:
        if not self.streaming:
            if len(self._json) + len(chunk) <= MAX_JSON_BYTES:
                self._json += chunk
            return
        for piece in chunk.splitlines(keepends=True):
            if self._skipping:
                self._skipping = not piece.endswith(b"\n")
                continue
            self._line += piece
            if len(self._line) > MAX_LINE_BYTES:
                self._line.clear()
                self._skipping = not piece.endswith(b"\n")
                continue
            if self._line.endswith(b"\n"):
                self._event_line(bytes(self._line))
                self._line.clear()

    def _event_line(self, line: bytes) -> None:
        if not line.startswith(b"data:"):
            return
        try:
            data = json.loads(line[5:])
        except ValueError:
            return
        if not isinstance(data, dict):
            return
        if data.get("type") == "message_start" and isinstance(data.get("message"), dict):
            message = data["message"]
            self.model = str(message.get("model") or self.model)
            self._start = usage_from(message.get("usage"))
        elif data.get("type") == "message_delta" and isinstance(data.get("usage"), dict):
            # Counts in message_delta are cumulative for the message: the last one wins.
            self._delta.update({k: v for k, v in data["usage"].items() if isinstance(v, int)})

    def usage(self) -> Usage:
        if not self.streaming:
            try:
                data = json.loads(bytes(self._json) or b"{}")
            except ValueError:
                return Usage()
            if not isinstance(data, dict):
                return Usage()
            self.model = str(data.get("model") or self.model)
            return usage_from(data.get("usage"))
        merged = {
            "input_tokens": self._start.input_tokens,
            "output_tokens": self._start.output_tokens,
            "cache_creation_input_tokens": self._start.cache_write_tokens,
            "cache_read_input_tokens": self._start.cache_read_tokens,
            **self._delta,
        }
        return usage_from(merged)


class Meter:
    """The run's spend; calls ``on_exceeded(spend)`` once, when it passes the budget."""

    def __init__(
        self,
        *,
        budget_usd: float,
        prices: Mapping[str, Price] | None = None,
        on_exceeded: Callable[[Spend], None] | None = None,
    ) -> None:
        self._prices = dict(prices or {})
        self._on_exceeded = on_exceeded
        self._lock = threading.Lock()
        self._spend = Spend(budget_usd=budget_usd)
        self._told = False

    def spend(self) -> Spend:
        with self._lock:
            return self._spend

    @property
    def exceeded(self) -> bool:
        return self.spend().exceeded

    def add(self, model: str, usage: Usage) -> Spend:
        match = price_for(model or "unknown", self._prices)
        label = match.key + (" (guessed)" if match.guessed else "")
        with self._lock:
            spend = self._spend
            self._spend = spend.model_copy(
                update={
                    "requests": spend.requests + 1,
                    "usage": spend.usage + usage,
                    "cost_usd": spend.cost_usd + cost_usd(usage, match.price),
                    "priced_as": tuple(sorted({*spend.priced_as, label})),
                }
            )
            now = self._spend
            tell = now.exceeded and not self._told
            self._told = self._told or tell
        if tell and self._on_exceeded is not None:
            self._on_exceeded(now)
        return now
