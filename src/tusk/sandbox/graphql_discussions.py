"""Discussions in the local GitHub's GraphQL: a discussion and its comments read, and
the ``addDiscussionComment`` and ``deleteDiscussionComment`` mutations."""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING, Any

from tusk.sandbox.graphql_paging import connection
from tusk.sandbox.graphql_reactions import reaction_groups
from tusk.sandbox.shapes_repos import node_id
from tusk.sandbox.world import SandboxError
from tusk.sandbox.world_clock import iso
from tusk.sandbox.world_records import Discussion, DiscussionComment, Repo

if TYPE_CHECKING:
    from tusk.sandbox.app_view import ResolverView


def discussion_by_number(resolver: ResolverView, repo: Repo, number: int) -> dict[str, Any]:
    discussion = repo.discussions.get(number)
    if discussion is None:
        raise SandboxError(404, f"Could not resolve to a Discussion with the number of {number}.")
    return discussion_node(resolver, repo, discussion)


def discussion_node(resolver: ResolverView, repo: Repo, discussion: Discussion) -> dict[str, Any]:
    return {
        "__typename": "Discussion",
        "id": node_id("Discussion", discussion.id),
        "databaseId": discussion.id,
        "number": discussion.number,
        "title": discussion.title,
        "body": discussion.body,
        "bodyText": discussion.body,
        "author": resolver.actor(discussion.author),
        "authorAssociation": resolver.shapes.association(repo, discussion.author),
        "createdAt": iso(discussion.created_at),
        "updatedAt": iso(discussion.updated_at),
        "lastEditedAt": None,  # discussion bodies are never edited here
        "url": f"{resolver.app.base}/{repo.full_name}/discussions/{discussion.number}",
        "closed": discussion.closed,
        "locked": False,
        "isAnswered": False,
        "answer": None,
        "stateReason": None,
        "repository": lambda: resolver.repository(repo),
        "category": {
            "__typename": "DiscussionCategory",
            "id": node_id("DiscussionCategory", zlib.crc32(discussion.category.encode())),
            "name": discussion.category,
            "slug": discussion.category.lower().replace(" ", "-"),
            "isAnswerable": False,
        },
        "labels": lambda **a: connection([], a, resolver.label),
        "comments": lambda **a: connection(
            discussion.comments, a, lambda c: comment_node(resolver, repo, discussion, c)
        ),
        "reactionGroups": lambda: reaction_groups(resolver, discussion.reactions),
    }


def comment_node(
    resolver: ResolverView, repo: Repo, discussion: Discussion, comment: DiscussionComment
) -> dict[str, Any]:
    return {
        "__typename": "DiscussionComment",
        "id": node_id("DiscussionComment", comment.id),
        "databaseId": comment.id,
        "body": comment.body,
        "bodyText": comment.body,
        "author": resolver.actor(comment.author),
        "authorAssociation": resolver.shapes.association(repo, comment.author),
        "createdAt": iso(comment.created_at),
        "updatedAt": iso(comment.updated_at),
        "url": f"{resolver.app.base}/{repo.full_name}/discussions/{discussion.number}"
        f"#discussioncomment-{comment.id}",
        "isAnswer": False,
        "isMinimized": False,
        "replyTo": None,
        "discussion": lambda: discussion_node(resolver, repo, discussion),
        "replies": lambda **a: connection(
            comment.replies, a, lambda reply: comment_node(resolver, repo, discussion, reply)
        ),
        "reactionGroups": lambda: reaction_groups(resolver, comment.reactions),
    }


def add_discussion_comment(resolver: ResolverView, input: dict[str, Any]) -> dict[str, Any]:
    for repo in resolver.world.repos.values():
        for discussion in repo.discussions.values():
            if node_id("Discussion", discussion.id) != input["discussionId"]:
                continue
            if not resolver.visible(repo):
                break  # GitHub does not reveal what the caller cannot see
            if not {"repo", "public_repo"} & set(resolver.token.scopes):
                raise SandboxError(
                    403,
                    "Your token has not been granted the required scopes to execute "
                    "this query: addDiscussionComment needs repo or public_repo.",
                )
            moment = resolver.world.clock.tick()
            resolver.world.check_body(input["body"], "DiscussionComment")
            comment = DiscussionComment(
                id=resolver.world.new_id(),
                author=resolver.token.user,
                body=input["body"],
                created_at=moment,
                updated_at=moment,
            )
            target = discussion.comments
            if input.get("replyToId"):
                parent = next(
                    (
                        c
                        for c in discussion.comments
                        if node_id("DiscussionComment", c.id) == input["replyToId"]
                    ),
                    None,
                )
                if parent is None:
                    raise SandboxError(404, "Could not resolve the comment to reply to.")
                comment.reply_to = parent.id
                target = parent.replies
            target.append(comment)
            discussion.updated_at = moment
            participants = {discussion.author, *(c.author for c in discussion.comments)}
            resolver.world.notify_activity(
                repo,
                "Discussion",
                discussion.number,
                resolver.token.user,
                comment.body,
                moment,
                subscribers=participants,
                author=discussion.author,
                latest_comment=None,
            )
            return {
                "__typename": "AddDiscussionCommentPayload",
                "clientMutationId": input.get("clientMutationId"),
                "comment": comment_node(resolver, repo, discussion, comment),
            }
    raise SandboxError(
        404, f"Could not resolve to a node with the global id of '{input['discussionId']}'"
    )


def delete_discussion_comment(resolver: ResolverView, input: dict[str, Any]) -> dict[str, Any]:
    """Delete a discussion comment; "if it has replies, wipe it instead" (the schema's
    description of deleteDiscussionComment): its body goes, its replies stay."""
    for repo in resolver.world.repos.values():
        for discussion in repo.discussions.values():
            for comment in discussion.comments:
                for item in (comment, *comment.replies):
                    if node_id("DiscussionComment", item.id) != input["id"]:
                        continue
                    if not resolver.visible(repo):
                        break
                    mine = item.author.lower() == resolver.token.user.lower()
                    if not mine and not resolver.world.can_push(repo, resolver.token.user):
                        raise SandboxError(
                            403, f"{resolver.token.user} does not have permission to delete it."
                        )
                    shape = comment_node(resolver, repo, discussion, item)
                    if item is comment and comment.replies:
                        comment.body = ""
                        comment.updated_at = resolver.world.clock.tick()
                    elif item is comment:
                        discussion.comments.remove(comment)
                    else:
                        comment.replies.remove(item)
                    return {
                        "__typename": "DeleteDiscussionCommentPayload",
                        "clientMutationId": input.get("clientMutationId"),
                        "comment": shape,
                    }
    raise SandboxError(404, f"Could not resolve to a node with the global id of '{input['id']}'")
