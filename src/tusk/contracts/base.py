"""The base of every contract: unknown fields are refused, values are frozen."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    """Base of every contract: unknown fields are refused, values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)
