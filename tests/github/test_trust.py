"""The trust decision shared by the poller and go-away: which source decides, and its answer."""

from __future__ import annotations

import pytest

from tusk.github import trust
from tusk.github.trust import TrustDecision

REPO = "alice/widgets"


def test_the_owner_is_owner_whatever_the_sources_say() -> None:
    for permission, association in ((None, None), ({"permission": "read"}, "NONE")):
        decision = trust.decide(REPO, "Alice", permission=permission, association=association)
        assert (decision.level, decision.source) == ("owner", "repository_owner")


@pytest.mark.parametrize(
    ("answer", "level"),
    [
        ({"permission": "write", "role_name": "write"}, "collaborator"),
        ({"permission": "admin", "role_name": "admin"}, "collaborator"),
        ({"permission": "write", "role_name": "maintain"}, "collaborator"),
        ({"permission": "read", "role_name": "maintain"}, "collaborator"),
        ({"permission": "read", "role_name": "triage"}, "external"),
        ({"permission": "read", "role_name": "read"}, "external"),
        ({"permission": "none"}, "external"),
    ],
)
def test_a_readable_permission_endpoint_decides_and_is_named(
    answer: dict[str, str], level: str
) -> None:
    # The association says COLLABORATOR; the endpoint, when readable, wins.
    decision = trust.decide(REPO, "bob", permission=answer, association="COLLABORATOR")
    assert (decision.level, decision.source) == (level, "permission_endpoint")


@pytest.mark.parametrize(
    ("association", "level"),
    [
        ("OWNER", "collaborator"),
        ("MEMBER", "collaborator"),
        ("COLLABORATOR", "collaborator"),
        ("collaborator", "collaborator"),
        ("CONTRIBUTOR", "external"),
        ("FIRST_TIME_CONTRIBUTOR", "external"),
        ("FIRST_TIMER", "external"),
        ("MANNEQUIN", "external"),
        ("NONE", "external"),
    ],
)
def test_unreadable_permission_endpoint_falls_back_on_author_association(
    association: str, level: str
) -> None:
    decision = trust.decide(REPO, "bob", permission=None, association=association)
    assert (decision.level, decision.source) == (level, "author_association")
    assert decision.detail == association.upper()


def test_nothing_readable_is_external_from_no_source() -> None:
    decision = trust.decide(REPO, "bob", permission=None, association=None)
    assert (decision.level, decision.source) == ("external", "none")
    assert not decision.trusted


def test_trusted_means_owner_or_collaborator() -> None:
    assert TrustDecision("owner", "repository_owner").trusted
    assert TrustDecision("collaborator", "author_association").trusted
    assert not TrustDecision("external", "permission_endpoint").trusted
