"""Confirmed rights (pure): the requester, or write access GitHub shows on every repository
the action touches; anything else refused with why and who can, never by association."""

from __future__ import annotations

import pytest

from tusk.github.rights import Role, judge, who_can

UNREAD = "GitHub shows collaborators' roles on a/b only to accounts with push access"


@pytest.mark.parametrize(
    ("login", "roles", "requester", "requester_may", "allowed", "said"),
    [
        ("erin", [], "Erin", True, True, "erin asked for this run"),
        ("erin", [Role("a/b", None, UNREAD)], "erin", False, False, UNREAD),
        ("bob", [Role("a/b", "write"), Role("c/d", "admin")], None, False, True, "write on a/b"),
        ("bob", [Role("a/b", "maintain")], "erin", True, True, "maintain on a/b"),
        ("bob", [Role("a/b", "write"), Role("c/d", "read")], "erin", True, False, "role read"),
        ("bob", [Role("a/b", "triage")], None, False, False, "role triage on a/b"),
        ("bob", [Role("a/b", None, UNREAD)], "erin", True, False, UNREAD),
        ("bob", [], None, False, False, "no repository to confirm it on"),
    ],
)
def test_judge(
    login: str,
    roles: list[Role],
    requester: str | None,
    requester_may: bool,
    allowed: bool,
    said: str,
) -> None:
    verdict = judge(login, roles=roles, requester=requester, requester_may=requester_may)
    assert verdict.allowed is allowed and said in verdict.why


def test_a_refusal_says_who_can_and_how_the_bot_could_tell() -> None:
    refused = judge("carol", roles=[Role("a/b", None, UNREAD)], requester="erin")
    assert "Who can: the run's requester, erin, or someone GitHub shows" in refused.refusal()
    assert "once the bot has push access to a/b" in refused.refusal()
    assert "requester" not in who_can([Role("a/b", "read")], "erin", requester_may=False)
