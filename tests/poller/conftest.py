"""The ``harness`` fixture: a poller wired to the local GitHub (helpers in poller_helpers)."""

from __future__ import annotations

from typing import Any

import pytest
from poller_helpers import SETTINGS, Harness, make_poller

from tusk.contracts.config import Settings


@pytest.fixture
def harness(local_github: Any) -> Any:
    def build(scn: dict[str, Any], settings: Settings = SETTINGS, **kwargs: Any) -> Harness:
        local_github.load(scn)
        return make_poller(local_github, settings, **kwargs)

    return build
