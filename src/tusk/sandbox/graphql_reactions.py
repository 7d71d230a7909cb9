"""Reactions in the local GitHub's GraphQL: ``reactionGroups`` on reactable nodes and
the ``addReaction`` mutation on the nodes REST has no reaction route for."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tusk.sandbox.shapes_repos import node_id
from tusk.sandbox.world import SandboxError
from tusk.sandbox.world_clock import iso
from tusk.sandbox.world_records import Reaction, Repo

if TYPE_CHECKING:
    from tusk.sandbox.app_view import ResolverView

# GitHub's ReactionContent enum ↔ the REST names the world stores.
REACTIONS: dict[str, str] = {
    "THUMBS_UP": "+1",
    "THUMBS_DOWN": "-1",
    "LAUGH": "laugh",
    "HOORAY": "hooray",
    "CONFUSED": "confused",
    "HEART": "heart",
    "ROCKET": "rocket",
    "EYES": "eyes",
}


def reaction_groups(resolver: ResolverView, reactions: list[Reaction]) -> list[dict[str, Any]]:
    """``Reactable.reactionGroups``: one group per reaction content, with whether the
    token's user reacted so (GitHub's schema: ``ReactionGroup.viewerHasReacted``)."""
    viewer = resolver.token.user.lower()
    groups = []
    for content, rest in REACTIONS.items():
        users = [one.user for one in reactions if one.content == rest]
        groups.append(
            {
                "__typename": "ReactionGroup",
                "content": content,
                "viewerHasReacted": viewer in {u.lower() for u in users},
                "reactors": {"__typename": "ReactorConnection", "totalCount": len(users)},
            }
        )
    return groups


def _reactable(resolver: ResolverView, subject_id: str) -> tuple[Repo, Any, str] | None:
    """The discussion, discussion comment or review behind a node id."""
    for repo in resolver.world.repos.values():
        for discussion in repo.discussions.values():
            if node_id("Discussion", discussion.id) == subject_id:
                return repo, discussion, "Discussion"
            pending = list(discussion.comments)
            while pending:
                comment = pending.pop()
                if node_id("DiscussionComment", comment.id) == subject_id:
                    return repo, comment, "DiscussionComment"
                pending.extend(comment.replies)
        for issue in repo.issues.values():
            for review in issue.pull.reviews if issue.pull else []:
                if node_id("PullRequestReview", review.id) == subject_id:
                    return repo, review, "PullRequestReview"
    return None


def add_reaction(resolver: ResolverView, input: dict[str, Any]) -> dict[str, Any]:
    """addReaction on the nodes REST has no reaction route for; idempotent as on
    GitHub (the same user and content make one reaction)."""
    found = _reactable(resolver, input["subjectId"])
    if found is None or not resolver.visible(found[0]):
        raise SandboxError(
            404, f"Could not resolve to a node with the global id of '{input['subjectId']}'"
        )
    _, subject, typename = found
    content = REACTIONS[input["content"]]
    login = resolver.token.user
    reaction = next(
        (
            one
            for one in subject.reactions
            if one.user.lower() == login.lower() and one.content == content
        ),
        None,
    )
    if reaction is None:
        reaction = Reaction(
            id=resolver.world.new_id(),
            user=login,
            content=content,
            created_at=resolver.world.clock.tick(),
        )
        subject.reactions.append(reaction)
    return {
        "__typename": "AddReactionPayload",
        "clientMutationId": input.get("clientMutationId"),
        "reaction": {
            "__typename": "Reaction",
            "id": node_id("Reaction", reaction.id),
            "databaseId": reaction.id,
            "content": input["content"],
            "createdAt": iso(reaction.created_at),
            "user": lambda: resolver.actor(reaction.user),
        },
        "subject": {"__typename": typename, "id": input["subjectId"]},
    }
