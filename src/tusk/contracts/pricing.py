"""What the model costs: one price table, token usage, and the spend of a run.

Pure. Prices are US dollars per million tokens, as Anthropic publishes them
(https://www.anthropic.com/pricing#api, "Model pricing"). A model is priced by
the longest table key its id contains (``claude-sonnet-4-5-20250929`` matches
``claude-sonnet-4-5``), then by its family (``opus``, ``sonnet``, ``haiku``);
a model nobody knows is priced as the dearest entry, so a budget errs on the
side of stopping early. ``agent.prices`` in tusk.yml adds or replaces entries.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

# Cache writes (5-minute TTL) cost 1.25 times the input price, cache reads 0.1 times
# (the same pricing page, "Prompt caching").
CACHE_WRITE_FACTOR = 1.25
CACHE_READ_FACTOR = 0.1
MILLION = 1_000_000


class Price(BaseModel):
    """US dollars per million tokens of one model."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0, description="USD per million input tokens")
    output: float = Field(ge=0, description="USD per million output tokens")
    cache_write: float | None = Field(
        None, ge=0, description="USD per million cache-write tokens (default 1.25 x input)"
    )
    cache_read: float | None = Field(
        None, ge=0, description="USD per million cache-read tokens (default 0.1 x input)"
    )

    def cache_write_rate(self) -> float:
        return self.input * CACHE_WRITE_FACTOR if self.cache_write is None else self.cache_write

    def cache_read_rate(self) -> float:
        return self.input * CACHE_READ_FACTOR if self.cache_read is None else self.cache_read


def _p(input_price: float, output_price: float) -> Price:
    return Price(input=input_price, output=output_price)


# The one table. Keys are substrings of model ids; the longest match wins.
DEFAULT_PRICES: dict[str, Price] = {
    "claude-opus-4-5": _p(5, 25),
    "claude-opus-4-1": _p(15, 75),
    "claude-opus-4": _p(15, 75),
    "claude-3-opus": _p(15, 75),
    "claude-sonnet-4-5": _p(3, 15),
    "claude-sonnet-4": _p(3, 15),
    "claude-3-7-sonnet": _p(3, 15),
    "claude-3-5-sonnet": _p(3, 15),
    "claude-haiku-4-5": _p(1, 5),
    "claude-3-5-haiku": _p(0.8, 4),
    "claude-3-haiku": _p(0.25, 1.25),
    # Families, for ids the table does not list yet (a newer release of a family).
    "opus": _p(15, 75),
    "sonnet": _p(3, 15),
    "haiku": _p(1, 5),
}


@dataclass(frozen=True)
class PriceMatch:
    key: str
    price: Price
    guessed: bool  # no table key matched: priced as the dearest entry


def price_for(model: str, overrides: Mapping[str, Price] | None = None) -> PriceMatch:
    table = {**DEFAULT_PRICES, **(overrides or {})}
    lowered = model.lower()
    matches = [key for key in table if key.lower() in lowered]
    if matches:
        key = max(matches, key=len)
        return PriceMatch(key, table[key], guessed=False)
    key = max(table, key=lambda k: (table[k].output, table[k].input))
    return PriceMatch(key, table[key], guessed=True)


class Usage(BaseModel):
    """Tokens of one or more responses, as the Messages API counts them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
        )


def usage_from(data: Mapping[str, object] | None) -> Usage:
    """A Messages API ``usage`` object (missing or odd fields count as zero)."""

    def count(name: str) -> int:
        value = (data or {}).get(name)
        return value if isinstance(value, int) and value > 0 else 0

    return Usage(
        input_tokens=count("input_tokens"),
        output_tokens=count("output_tokens"),
        cache_write_tokens=count("cache_creation_input_tokens"),
        cache_read_tokens=count("cache_read_input_tokens"),
    )


def cost_usd(usage: Usage, price: Price) -> float:
    return (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_write_tokens * price.cache_write_rate()
        + usage.cache_read_tokens * price.cache_read_rate()
    ) / MILLION


class Spend(BaseModel):
    """What a run spent on the model, as its model proxy metered it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    requests: int = 0
    usage: Usage = Usage()
    cost_usd: float = 0.0
    budget_usd: float
    priced_as: tuple[str, ...] = Field(
        (), description="price table keys used; a guessed one is marked '(guessed)'"
    )

    @property
    def exceeded(self) -> bool:
        return self.cost_usd > self.budget_usd

    def line(self) -> str:
        """One line for people: the cost, the tokens, the budget."""
        u = self.usage
        cache = (
            f", {u.cache_write_tokens} cache-write, {u.cache_read_tokens} cache-read"
            if u.cache_write_tokens or u.cache_read_tokens
            else ""
        )
        return (
            f"{format_usd(self.cost_usd)} of a {format_usd(self.budget_usd)} budget "
            f"({self.requests} request(s); {u.input_tokens} input, {u.output_tokens} output "
            f"tokens{cache})"
        )


def format_usd(amount: float) -> str:
    return f"${amount:.4f}" if amount < 1 else f"${amount:.2f}"
