"""REST handlers of a repository's Actions set-up: its secrets key, storing a secret
sealed with it, and its workflows (listed from the workflow files, enabled).

GitHub keeps secrets encrypted with a libsodium key pair per repository: callers fetch
the public key and send the value sealed with it ("Encrypting secrets for the REST
API", docs.github.com/rest/guides/encrypting-secrets-for-the-rest-api). The stand-in
holds the private key, opens each value and keeps it (``Repo.secret_values``) so a
test can prove what the workflows would receive; its REST API, like GitHub's, never
answers a value.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from typing import Any

from nacl.exceptions import CryptoError
from nacl.public import PrivateKey, SealedBox

from tusk.sandbox.rest import Call, Reply, handles, validation_failed
from tusk.sandbox.world import SandboxError
from tusk.sandbox.world_clock import iso
from tusk.sandbox.world_records import Repo

# "Secret names can only contain alphanumeric characters ([a-z], [A-Z], [0-9]) or
# underscores (_) ... must not start with the GITHUB_ prefix ... must not start with a
# number" (docs.github.com/actions/security-for-github-actions/security-guides/
# using-secrets-in-github-actions#naming-your-secrets).
SECRET_NAME = re.compile(r"^(?!GITHUB_)(?![0-9])[A-Za-z0-9_]+$", re.IGNORECASE)
WORKFLOW_FILE = re.compile(r"^\.github/workflows/[^/]+\.ya?ml$")


def secrets_key(repo: Repo) -> PrivateKey:
    """The repository's key pair, made on first use and kept for its life."""
    if repo._secrets_key is None:
        repo._secrets_key = bytes(PrivateKey.generate())
    return PrivateKey(repo._secrets_key)


def key_id(repo: Repo) -> str:
    public = bytes(secrets_key(repo).public_key)
    return str(int(hashlib.sha256(public).hexdigest()[:15], 16))  # GitHub's are digits


@handles("actions/get-repo-public-key")
def get_public_key(call: Call) -> Reply:
    """docs.github.com/rest/actions/secrets#get-a-repository-public-key: "Anyone with
    read access to the repository can use this endpoint"."""
    repo = call.repo()
    public = bytes(secrets_key(repo).public_key)
    return Reply(200, {"key_id": key_id(repo), "key": base64.b64encode(public).decode()})


@handles("actions/create-or-update-repo-secret")
def put_secret(call: Call) -> Reply:
    """docs.github.com/rest/actions/secrets#create-or-update-a-repository-secret:
    collaborator access and `repo`; the value sealed with the repository's public key,
    named by its `key_id`; 201 when created, 204 when updated."""
    repo = call.push_repo()
    name = call.params["secret_name"]
    if not SECRET_NAME.match(name):
        raise validation_failed("Secret", "name", "invalid", f"{name} is not a valid secret name")
    if str(call.field("key_id") or "") != key_id(repo):
        raise validation_failed("Secret", "key_id", "invalid", "key_id is not the repository's")
    try:
        sealed = base64.b64decode(str(call.field("encrypted_value") or ""), validate=True)
        value = SealedBox(secrets_key(repo)).decrypt(sealed).decode("utf-8")
    except (binascii.Error, CryptoError, UnicodeDecodeError):
        raise validation_failed(
            "Secret", "encrypted_value", "invalid", "encrypted_value is not sealed with the key"
        ) from None
    created = name not in repo.secrets
    repo.secrets[name] = call.world.clock.tick()
    repo.secret_values[name] = value
    return Reply(201, {}) if created else Reply(204)


# --------------------------------------------------------------------------- workflows


def workflow_files(call: Call, repo: Repo) -> list[tuple[str, str]]:
    """(path, name) of each workflow file on the default branch."""
    git = call.world.git
    head = git.resolve(repo.full_name, repo.default_branch) if git else None
    listing = git.read_path(repo.full_name, head, ".github/workflows") if git and head else None
    if listing is None or listing[0] != "dir":
        return []
    found = []
    for name, kind, _blob, _size in listing[1]:
        path = name if name.startswith(".github/") else f".github/workflows/{name}"
        if kind == "file" and WORKFLOW_FILE.match(path):
            found.append((path, path.rsplit("/", 1)[-1]))
    return found


def workflow_id(path: str) -> int:
    return int(hashlib.sha256(path.encode()).hexdigest()[:8], 16)


def _workflow(call: Call, repo: Repo, path: str, name: str) -> dict[str, Any]:
    url = f"{call.shapes.repo_url(repo)}/actions/workflows/{workflow_id(path)}"
    return {
        "id": workflow_id(path),
        "node_id": f"W_{workflow_id(path)}",
        "name": name,
        "path": path,
        "state": repo.disabled_workflows.get(path, "active"),
        "created_at": iso(repo.created_at),
        "updated_at": iso(repo.pushed_at),
        "url": url,
        "html_url": f"{call.base}/{repo.full_name}/blob/{repo.default_branch}/{path}",
        "badge_url": f"{call.base}/{repo.full_name}/workflows/{name}/badge.svg",
    }


@handles("actions/list-repo-workflows")
def list_workflows(call: Call) -> Reply:
    """docs.github.com/rest/actions/workflows#list-repository-workflows."""
    repo = call.repo()
    shapes = [_workflow(call, repo, path, name) for path, name in workflow_files(call, repo)]
    return Reply(200, {"total_count": len(shapes), "workflows": shapes})


@handles("actions/enable-workflow")
def enable_workflow(call: Call) -> Reply:
    """ "Enables a workflow and sets the `state` of the workflow to `active`"; the id or
    the file name names it (docs.github.com/rest/actions/workflows#enable-a-workflow)."""
    repo = call.push_repo()
    wanted = call.params["workflow_id"]
    for path, name in workflow_files(call, repo):
        if wanted in (name, str(workflow_id(path))):
            repo.disabled_workflows.pop(path, None)
            return Reply(204)
    raise SandboxError(404, "Not Found")
