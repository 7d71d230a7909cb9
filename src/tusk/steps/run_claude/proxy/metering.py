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
from dataclasses import dataclass
from typing import Any

from tusk.contracts.pricing import Price, Spend, Usage, cost_usd, price_for, usage_from

MAX_LINE_BYTES = 1 << 20  # an SSE line longer than this is not a usage line: skip it
MAX_JSON_BYTES = 32 << 20  # a plain JSON answer is read for its usage up to this size
MIN_ANSWER_TOKENS = 1024  # a request the budget leaves less room than this for is refused
MILLION = 1_000_000


# Only for an answer whose usage never came (a stream cut off before its last
# event, an answer that is not the API's JSON): bytes per token, counted low so
# that the estimate errs on the side of stopping. English runs near 4 per token.
ESTIMATE_BYTES_PER_TOKEN = 2


class UsageTap:
    """Fed the raw bytes of one response as they pass; knows its model and usage.

    A stream cut off before its ``message_delta`` (the agent stopped reading, or was
    stopped) was still generated and paid for up to the cut: its output is estimated
    from the content that passed. An answer without any usage is estimated from the
    sizes of the request and the answer."""

    def __init__(
        self,
        *,
        streaming: bool,
        request_model: str | None,
        request_bytes: int = 0,
        request_max_tokens: int | None = None,
    ) -> None:
        self.streaming = streaming
        self.also: Any = None  # another tap fed the same bytes (the proxy's record)
        self.model = request_model or ""
        self._request_bytes = request_bytes
        self._max_tokens = request_max_tokens or 0
        self._start: Usage | None = None
        self._delta: dict[str, Any] = {}
        self._line = bytearray()
        self._skipping = False
        self._json = bytearray()
        self._content_bytes = 0  # of content deltas
        self._content_events = 0
        self._stopped = False  # message_stop seen

    @property
    def complete(self) -> bool:
        """Whether the whole answer passed (its usage is exact)."""
        if self.streaming:
            return self._stopped
        return self._parsed() is not None

    def feed(self, chunk: bytes) -> None:
        if self.also is not None:
            self.also.feed(chunk)
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
        kind = data.get("type")
        if kind == "message_start" and isinstance(data.get("message"), dict):
            message = data["message"]
            self.model = str(message.get("model") or self.model)
            if isinstance(message.get("usage"), dict):
                self._start = usage_from(message["usage"])
        elif kind == "message_delta" and isinstance(data.get("usage"), dict):
            # Counts in message_delta are cumulative for the message: the last one wins.
            self._delta.update({k: v for k, v in data["usage"].items() if isinstance(v, int)})
        elif kind == "content_block_delta":
            self._content_events += 1
            delta = data.get("delta")
            for key in ("text", "partial_json", "thinking"):
                value = delta.get(key) if isinstance(delta, dict) else None
                if isinstance(value, str):
                    self._content_bytes += len(value.encode())
        elif kind == "message_stop":
            self._stopped = True

    def _parsed(self) -> dict[str, Any] | None:
        try:
            data = json.loads(bytes(self._json) or b"null")
        except ValueError:
            return None
        return data if isinstance(data, dict) else None

    def _estimate(self, size: int) -> int:
        return -(-size // ESTIMATE_BYTES_PER_TOKEN)

    def usage(self) -> Usage:
        if not self.streaming:
            data = self._parsed()
            if data is not None and isinstance(data.get("usage"), dict):
                self.model = str(data.get("model") or self.model)
                return usage_from(data["usage"])
            return Usage(  # no usage to read: the sizes say what it may have cost
                input_tokens=self._estimate(self._request_bytes),
                output_tokens=max(self._estimate(len(self._json)), self._max_tokens),
            )
        start = self._start or Usage(input_tokens=self._estimate(self._request_bytes))
        output = start.output_tokens
        if "output_tokens" not in self._delta:  # cut off before its end: estimated
            output = max(output, self._content_events, self._estimate(self._content_bytes))
        merged = {
            "input_tokens": start.input_tokens,
            "output_tokens": output,
            "cache_creation_input_tokens": start.cache_write_tokens,
            "cache_read_input_tokens": start.cache_read_tokens,
            **self._delta,
        }
        return usage_from(merged)


@dataclass(frozen=True)
class Reservation:
    """What one request may cost at most, held against the budget until it is metered."""

    usd: float
    max_tokens: int  # the answer's output tokens the budget leaves room for


class Meter:
    """The run's spend; calls ``on_exceeded(spend)`` once, when it passes the budget.

    Spend is known only when an answer ends, so each request first reserves its worst
    case (``reserve``): its input, estimated from its size, and its whole
    ``max_tokens`` of output at the model's price. Requests whose worst case the
    budget no longer covers are refused, or their ``max_tokens`` lowered to what it
    does cover; so however many run at once, the spend does not pass the budget."""

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
        self._reserved = 0.0
        self._exhausted = False  # a request's worst case found no room: no more will

    def spend(self) -> Spend:
        with self._lock:
            return self._spend

    @property
    def exceeded(self) -> bool:
        """The spend passed the budget, or the budget had no room left for a request."""
        with self._lock:
            return self._spend.exceeded or self._exhausted

    @property
    def reserved_usd(self) -> float:
        with self._lock:
            return self._reserved

    def reserve(
        self, model: str, *, request_bytes: int, max_tokens: int, least: int = MIN_ANSWER_TOKENS
    ) -> Reservation | None:
        """Hold the request's worst case against the budget, its ``max_tokens`` lowered
        to what is left if need be; None when not even ``least`` output tokens fit."""
        price = price_for(model or "unknown", self._prices).price
        input_tokens = -(-request_bytes // ESTIMATE_BYTES_PER_TOKEN)
        input_usd = input_tokens * max(price.input, price.cache_write_rate()) / MILLION
        held: Reservation | None = None
        with self._lock:
            left = self._spend.budget_usd - self._spend.cost_usd - self._reserved - input_usd
            affordable = int(left * MILLION / price.output) if price.output > 0 else max_tokens
            granted = min(max_tokens, affordable)
            if left > 0 and granted > 0 and granted >= min(least, max_tokens):
                held = Reservation(input_usd + granted * price.output / MILLION, granted)
                self._reserved += held.usd
                return held
            self._exhausted = True
            tell, self._told = not self._told, True
            now = self._spend
        if tell and self._on_exceeded is not None:
            self._on_exceeded(now)  # the budget has no room left: the session stops
        return held

    def release(self, held: Reservation | None) -> None:
        """Give a reservation back: its request never reached the API, or cost nothing."""
        if held is not None:
            with self._lock:
                self._reserved = max(0.0, self._reserved - held.usd)

    def settle(self, held: Reservation | None, model: str, usage: Usage) -> Spend:
        """The answer's real cost in place of its reservation."""
        self.release(held)
        return self.add(model, usage)

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
