"""Behaviours of github.com that a real deployment meets and the local GitHub reproduces,
each checked against its source (named in the sandbox code next to it)."""

from __future__ import annotations

from typing import Any

import pytest

from tusk.github import Forbidden


@pytest.fixture
def gh(local_github: Any, base_scenario: dict[str, Any]) -> Any:
    local_github.load(base_scenario)
    return local_github


def test_permission_endpoint_needs_push_access(gh: Any) -> None:
    path = "/repos/alice/widgets/collaborators/bob/permission"
    assert gh.gateway("alice").get(path)["permission"] == "write"
    with pytest.raises(Forbidden) as refused:
        gh.gateway("agent").get(path)  # the bot cannot push to alice/widgets
    assert refused.value.github_message == "Must have push access to view collaborator permission."
