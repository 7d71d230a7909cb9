"""GitHub's second spelling of a repository's URLs: ``/repositories/{id}/...``.

GitHub answers a repository's paths by name (``/repos/{owner}/{repo}/...``, the form
its OpenAPI description documents) and by the repository's id: the ``Link`` pages of
every repository-scoped list and the ``Location`` of a renamed or transferred
repository's redirects point at ``/repositories/{id}/...`` (recorded in
``@octokit/fixtures``: ``paginate-issues``, ``rename-repository``). Both name the same
operation, so the stand-in maps the id form onto the documented one before matching,
and writes the id form wherever GitHub does.
"""

from __future__ import annotations

import re

from tusk.sandbox.world import World
from tusk.sandbox.world_records import Repo

ID_PATH = re.compile(r"^/repositories/(?P<id>[0-9]+)(?P<rest>(/.*)?)$")
NAME_PATH = re.compile(r"^/repos/(?P<owner>[^/]+)/(?P<name>[^/]+)(?P<rest>(/.*)?)$")


def by_id(world: World, repo_id: int) -> Repo | None:
    return next((repo for repo in world.repos.values() if repo.id == repo_id), None)


def canonical_path(world: World, path: str) -> str | None:
    """``path`` in the documented form: ``/repositories/{id}/rest`` becomes
    ``/repos/{owner}/{repo}/rest``; any other path is itself. None: no repository has
    that id (GitHub answers 404)."""
    found = ID_PATH.match(path)
    if found is None:
        return path
    repo = by_id(world, int(found["id"]))
    if repo is None:
        return None
    return f"/repos/{repo.full_name}{found['rest']}"


def id_path(world: World, path: str) -> str:
    """``path`` as GitHub's ``Link`` and ``Location`` headers spell it: a repository's
    paths by its id, every other path unchanged."""
    found = NAME_PATH.match(path)
    if found is None:
        return path
    repo = world.repo(found["owner"], found["name"])
    if repo is None:
        return path
    return f"/repositories/{repo.id}{found['rest']}"
