"""Trust says what it knows: author_association, as GitHub answers it, errs broad and says so."""

from __future__ import annotations

from typing import Any

import pytest
from poller_helpers import BOT, make_poller, settle

from tusk.contracts.config import Settings
from tusk.github.trust import decide, shown

ORG_REPO = "acme/rockets"
CONTROL = "alice/control"  # the helpers decode dispatches to it
PEOPLE = ["maria", "rita", "tom", "carl", "wes"]


def org_scenario(*, bot_may_push: bool) -> dict[str, Any]:
    """acme (an organisation) owns rockets: maria is a member, rita a read collaborator,
    tom a triage one, wes a write one, carl has commits in it."""
    collaborators = {"rita": "read", "tom": "triage", "wes": "write"}
    if bot_may_push:
        collaborators[BOT] = "write"
    comments = [{"author": who, "body": f"@{BOT} fix the fins, {who} here"} for who in PEOPLE]
    return {
        "users": [
            {"login": "acme", "type": "Organization", "members": ["maria"]},
            *({"login": who} for who in [*PEOPLE, "alice", BOT]),
        ],
        "tokens": {
            "bot-read": {"user": BOT, "scopes": ["notifications", "repo"], "read_only": True},
            "dispatch": {"user": "alice", "scopes": ["repo"]},
            "agent": {"user": BOT, "scopes": ["repo"]},  # build-context's, claiming a run
        },
        "repos": [
            {
                "name": ORG_REPO,
                "collaborators": collaborators,
                "contributors": ["carl"],
                "issues": [{"number": 1, "author": "wes", "title": "Fins", "comments": comments}],
            },
            {
                "name": CONTROL,
                "private": True,
                "collaborators": {BOT: "write", "alice": "admin"},
                "labels": ["workflow"],
            },
        ],
    }


SETTINGS = Settings(bot=BOT, control_repo=CONTROL, allowed_users=tuple(PEOPLE))


def trust_of_each(local_github: Any, *, bot_may_push: bool) -> dict[str, tuple[str, str]]:
    local_github.load(org_scenario(bot_may_push=bot_may_push))
    h = make_poller(local_github, SETTINGS)
    settled = settle(h)  # one run for the thread; the rest are its follow-ups (C1)
    trust = {doc.actor: (doc.trust_level, doc.trust_source) for doc in settled.tasks}
    return trust | {f["author"]: (f["trust_level"], f["trust_source"]) for f in settled.followups}


def test_the_stand_in_answers_member_contributor_and_any_role_collaborator_as_github(
    local_github: Any,
) -> None:
    local_github.load(org_scenario(bot_may_push=False))
    comments = local_github.gateway("bot-read").get(f"/repos/{ORG_REPO}/issues/1/comments")
    shown_as = {c["user"]["login"]: c["author_association"] for c in comments}
    assert shown_as == {
        "maria": "MEMBER",
        "rita": "COLLABORATOR",
        "tom": "COLLABORATOR",
        "wes": "COLLABORATOR",
        "carl": "CONTRIBUTOR",
    }


def test_without_push_access_association_makes_read_and_triage_collaborators_and_members_trusted(
    local_github: Any,
) -> None:
    """The broad side, recorded as such: the level came from the association."""
    assert trust_of_each(local_github, bot_may_push=False) == {
        "maria": ("collaborator", "author_association"),
        "rita": ("collaborator", "author_association"),
        "tom": ("collaborator", "author_association"),
        "wes": ("collaborator", "author_association"),
        "carl": ("external", "author_association"),
    }


def test_with_push_access_the_endpoint_tells_read_and_triage_from_write(local_github: Any) -> None:
    """The same people, with the role visible: only wes may write."""
    assert trust_of_each(local_github, bot_may_push=True) == {
        "maria": ("external", "permission_endpoint"),
        "rita": ("external", "permission_endpoint"),
        "tom": ("external", "permission_endpoint"),
        "wes": ("collaborator", "permission_endpoint"),
        "carl": ("external", "permission_endpoint"),
    }


@pytest.mark.parametrize(
    ("association", "level", "words"),
    [
        (
            "COLLABORATOR",
            "collaborator",
            "collaborator, by association (COLLABORATOR): role not visible",
        ),
        ("MEMBER", "collaborator", "collaborator, by association (MEMBER): role not visible"),
        ("OWNER", "collaborator", "collaborator, by association (OWNER): role not visible"),
        ("CONTRIBUTOR", "external", "external, by association (CONTRIBUTOR)"),
        ("FIRST_TIME_CONTRIBUTOR", "external", "external, by association (FIRST_TIME_CONTRIBUTOR)"),
        ("NONE", "external", "external, by association (NONE)"),
    ],
)
def test_a_level_by_association_says_so(association: str, level: str, words: str) -> None:
    decision = decide(ORG_REPO, "rita", permission=None, association=association)
    assert (decision.level, decision.source) == (level, "author_association")
    assert decision.describe() == words


def test_the_endpoint_and_the_owner_say_what_decided() -> None:
    triage = decide(
        ORG_REPO,
        "tom",
        permission={"permission": "read", "role_name": "triage"},
        association="COLLABORATOR",
    )
    assert triage.describe() == "external (role triage)"
    assert decide("rita/x", "rita", permission=None, association=None).describe() == "owner"
    assert (
        shown("collaborator", "author_association")
        == "collaborator, by association: role not visible"
    )
