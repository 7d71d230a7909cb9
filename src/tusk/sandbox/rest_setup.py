"""REST handlers a deployment is set up with: creating a repository, committing a file
through the Contents API, inviting a collaborator and accepting the invitation.

Each follows GitHub's documented behaviour (the URL beside it): a new repository is
empty until a file is committed; a file is replaced only with the blob sha it replaces
(409 for a stale one); an invitee has no access to a private repository until they
accept the invitation.
"""

from __future__ import annotations

import base64
import binascii
import re

from tusk.sandbox.gitstore import CommitSpec
from tusk.sandbox.rest import Call, Reply, handles, listing, validation_failed
from tusk.sandbox.rest_repos import content_entry
from tusk.sandbox.world import SandboxError
from tusk.sandbox.world_clock import iso
from tusk.sandbox.world_records import Invitation, Repo

REPO_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")
# The permission names of "Add a repository collaborator" and the roles GitHub grants.
ROLES = {"pull": "read", "push": "write"} | {r: r for r in ("triage", "maintain", "admin")}


# --------------------------------------------------------------------------- repositories


def _create_repo(call: Call, owner: str) -> Reply:
    """docs.github.com/rest/repos/repos#create-a-repository-for-the-authenticated-user:
    `repo` scope for a private repository, `public_repo` or `repo` for a public one;
    422 when the name is taken. Without `auto_init` the repository has no commit."""
    login = call.require_user()
    private = bool(call.field("private", False))
    call.require_scope("repo") if private else call.require_scope("repo", "public_repo")
    name = str(call.field("name") or "")
    if not REPO_NAME.match(name):
        raise validation_failed("Repository", "name", "invalid", f"{name!r} is not a valid name")
    if call.world.repo(owner, name) is not None:
        raise validation_failed(
            "Repository", "name", "custom", "name already exists on this account"
        )
    moment = call.world.clock.tick()
    repo = Repo(
        owner=call.world.users[owner.lower()].login,
        name=name,
        id=call.world.new_id(),
        created_at=moment,
        updated_at=moment,
        pushed_at=moment,
        private=private,
        description=call.field("description"),
        has_discussions=bool(call.field("has_discussions", False)),
    )
    if owner.lower() != login.lower():  # an organisation's repository: its creator admins it
        repo.collaborators[login] = "admin"
    call.world.add_repo(repo)
    if call.world.git is not None:
        call.world.git.create(repo.full_name, [], repo.default_branch)
    return Reply(201, call.shapes.repo(repo, login), {"Location": call.shapes.repo_url(repo)})


@handles("repos/create-for-authenticated-user")
def create_my_repo(call: Call) -> Reply:
    return _create_repo(call, call.require_user())


@handles("repos/create-in-org")
def create_org_repo(call: Call) -> Reply:
    """docs.github.com/rest/repos/repos#create-an-organization-repository: "The
    authenticated user must be a member of the organization"."""
    login = call.require_user()
    org = call.world.user(call.params["org"])
    if org is None or org.type != "Organization":
        raise SandboxError(404, "Not Found")
    if login.lower() not in {m.lower() for m in org.members}:
        raise SandboxError(403, "You need to be a member of the organization to create in it")
    return _create_repo(call, org.login)


@handles("orgs/check-membership-for-user")
def check_org_membership(call: Call) -> Reply:
    """docs.github.com/rest/orgs/members#check-organization-membership-for-a-user: 204 for
    a member, 404 for anyone else. (GitHub redirects a requester who is no member to the
    public-membership check, which answers 404 for them too; the stand-in answers it.)"""
    call.require_user()
    org = call.world.user(call.params["org"])
    if org is None or org.type != "Organization":
        raise SandboxError(404, "Not Found")
    if call.params["username"].lower() in {m.lower() for m in org.members}:
        return Reply(204)
    raise SandboxError(404, "Not Found")


# --------------------------------------------------------------------------- contents


@handles("repos/create-or-update-file-contents")
def put_content(call: Call) -> Reply:
    """docs.github.com/rest/repos/contents#create-or-update-file-contents: `repo`
    scope, and "the `workflow` scope is also required in order to modify files in the
    `.github/workflows` directory"; `sha` "required if you are updating a file", and a
    sha that is not the file's current blob is refused with 409."""
    repo = call.push_repo()
    path = call.params["path"].strip("/")
    token = call.token
    workflow_file = path.startswith(".github/workflows/")
    if workflow_file and token and token.repository is None and "workflow" not in token.scopes:
        # The description documents the scope and lists 404 among the answers.
        raise SandboxError(
            404,
            f"refusing to allow a Personal Access Token to create or update workflow "
            f"`{path}` without `workflow` scope",
        )
    try:
        text = base64.b64decode(str(call.field("content") or ""), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise validation_failed("Content", "content", "invalid", "content is not Base64") from None
    git = call.world.git
    branch = call.field("branch") or repo.default_branch
    head = git.resolve(repo.full_name, branch) if git else None
    found = git.read_path(repo.full_name, head, path) if git and head else None
    if found is not None and found[0] != "file":
        raise validation_failed("Content", "path", "invalid", f"{path} is a directory")
    current = found[1][1] if found is not None else None
    sha = call.field("sha")
    if current is not None and not sha:
        raise SandboxError(422, 'Invalid request.\n\n"sha" wasn\'t supplied.')
    if current is not None and sha != current:
        raise SandboxError(409, f"{path} does not match {sha}")
    login = call.login or repo.owner
    user = call.world.user(login)
    moment = call.world.clock.tick()
    if git is not None:
        commit = CommitSpec(
            branch=branch,
            parent=branch if head else None,
            files={path: text},
            message=str(call.field("message") or f"Update {path}"),
            author=login,
            email=f"{user.id if user else 0}+{login}@users.noreply.github.com",
            when=moment,
        )
        git.append(repo.full_name, [commit])
    repo.pushed_at = repo.updated_at = moment
    new_head = git.resolve(repo.full_name, branch) if git else ""
    stored = git.read_path(repo.full_name, new_head, path) if git else None
    blob = stored[1][1] if stored else ""
    data = text.encode("utf-8")
    entry = content_entry(call, repo, path, "file", blob, len(data), branch, None)
    commit_shape = {
        "sha": new_head,
        "node_id": base64.b64encode(f"Commit:{new_head}".encode()).decode().rstrip("="),
        "message": str(call.field("message") or ""),
        "html_url": f"{call.base}/{repo.full_name}/commit/{new_head}",
        "url": f"{call.shapes.repo_url(repo)}/git/commits/{new_head}",
        "author": {"name": login, "email": "", "date": iso(moment)},
        "committer": {"name": login, "email": "", "date": iso(moment)},
        # As GitHub answers a commit made through this API (its recorded exchange).
        "verification": {
            "verified": False,
            "reason": "unsigned",
            "signature": None,
            "payload": None,
        },
    }
    return Reply(201 if current is None else 200, {"content": entry, "commit": commit_shape})


# --------------------------------------------------------------------------- collaborators


def _invitation(call: Call, repo: Repo, invitation: Invitation) -> dict[str, object]:
    url = f"{call.base}/user/repository_invitations/{invitation.id}"
    return {
        "id": invitation.id,
        "node_id": f"RI_{invitation.id}",
        "repository": call.shapes.small_repo(repo),
        "invitee": call.shapes.user(invitation.invitee),
        "inviter": call.shapes.user(invitation.inviter),
        "permissions": invitation.permission,  # read, triage, write, maintain or admin
        "created_at": iso(invitation.created_at),
        "expired": False,
        "url": url,
        "html_url": f"{call.base}/{repo.full_name}/invitations",
    }


@handles("repos/add-collaborator")
def add_collaborator(call: Call) -> Reply:
    """docs.github.com/rest/collaborators/collaborators#add-a-repository-collaborator:
    an admin invites; 201 with the invitation (the invitee gets access only once they
    accept it), 204 when the user is already a collaborator (their role updated)."""
    repo = call.repo()
    login = call.require_user()
    call.require_scope("repo")
    if call.world.permission(repo, login) != "admin":
        raise SandboxError(403, "Must have admin rights to Repository.")
    user = call.world.user(call.params["username"])
    if user is None:
        raise SandboxError(404, "Not Found")
    role = ROLES.get(str(call.field("permission") or "push"))
    if role is None:
        raise validation_failed("Repository", "permission", "invalid")
    if user.login.lower() == repo.owner.lower():
        raise validation_failed(
            "Repository", "username", "invalid", "Repository owner cannot be a collaborator"
        )
    if user.login.lower() in {c.lower() for c in repo.collaborators}:
        repo.collaborators[user.login] = role
        return Reply(204)
    pending = next((i for i in repo.invitations if i.invitee.lower() == user.login.lower()), None)
    if pending is None:
        pending = Invitation(call.world.new_id(), user.login, login, role, call.world.clock.tick())
        repo.invitations.append(pending)
    pending.permission = role
    # The invitation as GitHub answers its creation: no ``expired`` yet, and its URL in
    # Location (recorded: @octokit/fixtures add-and-remove-repository-collaborator).
    shape = {k: v for k, v in _invitation(call, repo, pending).items() if k != "expired"}
    return Reply(201, shape, {"Location": str(shape["url"])})


@handles("repos/check-collaborator")
def check_collaborator(call: Call) -> Reply:
    """204 when the user is a collaborator (an invitee is not, until they accept), else 404
    (docs.github.com/rest/collaborators/collaborators#check-if-a-user-is-a-repository-collaborator)."""
    repo = call.repo()
    user = call.world.user(call.params["username"])
    if user is None:
        raise SandboxError(404, "Not Found")
    if user.login.lower() == repo.owner.lower() or user.login.lower() in {
        c.lower() for c in repo.collaborators
    }:
        return Reply(204)
    raise SandboxError(404, "Not Found")


@handles("repos/list-invitations")
def list_repo_invitations(call: Call) -> Reply:
    """The repository's open invitations, for its admins
    (docs.github.com/rest/collaborators/invitations#list-repository-invitations)."""
    repo = call.repo()
    if call.world.permission(repo, call.require_user()) != "admin":
        raise SandboxError(404, "Not Found")
    return listing(call, [_invitation(call, repo, i) for i in repo.invitations])


def _mine(call: Call) -> list[tuple[Repo, Invitation]]:
    login = call.require_user()
    return [
        (repo, invitation)
        for repo in call.world.repos.values()
        for invitation in repo.invitations
        if invitation.invitee.lower() == login.lower()
    ]


@handles("repos/list-invitations-for-authenticated-user")
def list_my_invitations(call: Call) -> Reply:
    """docs.github.com/rest/collaborators/invitations#list-repository-invitations-for-the-
    authenticated-user: the invitations the caller has not accepted yet."""
    call.require_scope("repo")
    return listing(call, [_invitation(call, repo, i) for repo, i in _mine(call)])


@handles("repos/accept-invitation-for-authenticated-user")
def accept_invitation(call: Call) -> Reply:
    """Accepting makes the invitee a collaborator with the invited role; 204
    (docs.github.com/rest/collaborators/invitations#accept-a-repository-invitation)."""
    call.require_scope("repo")
    wanted = call.int_param("invitation_id")
    for repo, invitation in _mine(call):
        if invitation.id == wanted:
            repo.invitations.remove(invitation)
            repo.collaborators[invitation.invitee] = invitation.permission
            return Reply(204)
    raise SandboxError(404, "Not Found")
