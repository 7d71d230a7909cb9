"""The local GitHub's GraphQL mutations on whole issues: deleting and transferring.

What people (admins, maintainers) may do to any issue, Tusk's state issues
included, so tests can show that state survives it. REST has neither: GitHub's
REST API has no route to delete an issue (its OpenAPI description has no
``DELETE /repos/{owner}/{repo}/issues/{issue_number}``), and transferring is
done in the web UI, the CLI or GraphQL.

- ``deleteIssue``: "Deletes an Issue object" (GitHub's GraphQL schema). Only
  people with admin access can delete an issue
  (docs.github.com/en/issues/tracking-your-work-with-issues/administering-issues/deleting-an-issue).
  Its URL then answers 410 Gone (the "Get an issue" operation documents 410).
- ``transferIssue``: "Transfer an issue to a different repository"; it needs write
  access to both repositories, which must belong to the same owner
  (docs.github.com/en/issues/tracking-your-work-with-issues/administering-issues/transferring-an-issue).
  The issue gets the next number there; its old URL answers 301 Moved Permanently
  (documented for "Get an issue").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tusk.sandbox.shapes_repos import node_id
from tusk.sandbox.world import SandboxError
from tusk.sandbox.world_records import Issue, Repo

if TYPE_CHECKING:
    from tusk.sandbox.app_view import ResolverView


def _find_issue(resolver: ResolverView, issue_id: str) -> tuple[Repo, Issue]:
    for repo in resolver.world.repos.values():
        for issue in repo.issues.values():
            mine = issue.pull is None and node_id("Issue", issue.id) == issue_id
            if mine and resolver.visible(repo):
                return repo, issue
    raise SandboxError(404, f"Could not resolve to a node with the global id of '{issue_id}'")


def _find_repo(resolver: ResolverView, repo_id: str) -> Repo:
    for repo in resolver.world.repos.values():
        if node_id("Repository", repo.id) == repo_id and resolver.visible(repo):
            return repo
    raise SandboxError(404, f"Could not resolve to a node with the global id of '{repo_id}'")


def delete_issue(resolver: ResolverView, input: dict[str, Any]) -> dict[str, Any]:
    repo, issue = _find_issue(resolver, input["issueId"])
    if resolver.world.permission(repo, resolver.token.user) != "admin":
        raise SandboxError(403, f"{resolver.token.user} does not have permission to delete it.")
    del repo.issues[issue.number]
    repo.gone[issue.number] = None
    return {
        "__typename": "DeleteIssuePayload",
        "clientMutationId": input.get("clientMutationId"),
        "repository": resolver.repository(repo),
    }


def transfer_issue(resolver: ResolverView, input: dict[str, Any]) -> dict[str, Any]:
    from tusk.sandbox.rest_issues import next_number

    repo, issue = _find_issue(resolver, input["issueId"])
    target = _find_repo(resolver, input["repositoryId"])
    login = resolver.token.user
    world = resolver.world
    if not (world.can_push(repo, login) and world.can_push(target, login)):
        raise SandboxError(403, f"{login} does not have permission to transfer this issue.")
    if target.owner.lower() != repo.owner.lower() or target is repo:
        raise SandboxError(
            422, "Issues can only be transferred to another repository of the same owner."
        )
    del repo.issues[issue.number]
    old = issue.number
    issue.number = next_number(target)
    labels = set(target.labels) if not input.get("createLabelsIfMissing") else None
    issue.labels = [name for name in issue.labels if labels is None or name.lower() in labels]
    issue.labels = world.ensure_labels(target, issue.labels)
    issue.updated_at = world.clock.tick()
    target.issues[issue.number] = issue
    repo.gone[old] = (target.full_name, issue.number)
    return {
        "__typename": "TransferIssuePayload",
        "clientMutationId": input.get("clientMutationId"),
        "issue": resolver.issue(target, issue),
    }
