"""Real bare git repositories behind the local GitHub, one temporary folder per server.

Repositories are built from a scenario's ``files`` and ``branches`` with one
``git fast-import`` each, forks are local clones, and clients clone, fetch
and push over smart HTTP through ``git http-backend`` (CGI).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
    "LC_ALL": "C",
}


# GitHub refuses a push that touches workflow files from a token without the
# ``workflow`` scope; the server says which scope the pusher has in the env.
PRE_RECEIVE = r"""#!/bin/sh
[ "$TUSK_SANDBOX_WORKFLOW_SCOPE" = "1" ] && exit 0
while read old new ref; do
  [ "$new" = "0000000000000000000000000000000000000000" ] && continue
  for commit in $(git rev-list "$new" --not --all); do
    file=$(git diff-tree --no-commit-id --name-only -r --root "$commit" -- .github/workflows \
      | head -n 1)
    if [ -n "$file" ]; then
      echo "refusing to allow a Personal Access Token to create or update workflow" \
        "\`$file\` without \`workflow\` scope" >&2
      exit 1
    fi
  done
done
exit 0
"""


@dataclass(frozen=True)
class BranchHead:
    name: str
    sha: str
    date: str  # ISO 8601 committer date
    message: str
    author: str


@dataclass(frozen=True)
class FileChange:
    filename: str
    status: str  # added | removed | modified | renamed
    additions: int
    deletions: int
    patch: str
    previous_filename: str | None = None


@dataclass(frozen=True)
class CommitSpec:
    branch: str
    parent: str | None  # a branch name to start from, or None for a root commit
    files: dict[str, str | None]  # None deletes the file
    message: str
    author: str
    email: str
    when: datetime


class GitStore:
    def __init__(self, root: Path | None = None) -> None:
        self.root = root or Path(tempfile.mkdtemp(prefix="tusk-sandbox-git-"))
        self.root.mkdir(parents=True, exist_ok=True)

    def path(self, full_name: str) -> Path:
        owner, name = full_name.lower().split("/", 1)
        return self.root / owner / f"{name}.git"

    def exists(self, full_name: str) -> bool:
        return self.path(full_name).is_dir()

    def _git(
        self, repo: Path, *args: str, data: bytes | None = None, env: dict[str, str] | None = None
    ) -> str:
        completed = subprocess.run(
            ["git", *args],
            cwd=repo,
            input=data,
            capture_output=True,
            env={**os.environ, **GIT_ENV, **(env or {})},
            check=False,
        )
        if completed.returncode != 0:
            raise RuntimeError(f"git {args[0]} failed: {completed.stderr.decode(errors='replace')}")
        return completed.stdout.decode("utf-8", errors="replace")

    # -- building

    def create(self, full_name: str, commits: list[CommitSpec], default_branch: str) -> None:
        path = self.path(full_name)
        if path.exists():
            shutil.rmtree(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        # Copying a prepared empty repository saves three git processes per repository.
        shutil.copytree(self._template(), path)
        (path / "HEAD").write_text(f"ref: refs/heads/{default_branch}\n", encoding="utf-8")
        if commits:
            self._git(path, "fast-import", "--quiet", data=fast_import_stream(commits))

    def _template(self) -> Path:
        template = self.root.parent / f"{self.root.name}-template.git"
        if not template.exists():
            subprocess.run(
                ["git", "init", "--bare", "-q", str(template)],
                check=True,
                env={**os.environ, **GIT_ENV},
            )
            self._git(template, "config", "http.receivepack", "true")
            self._git(template, "config", "uploadpack.allowAnySHA1InWant", "true")
            shutil.rmtree(template / "hooks", ignore_errors=True)
            (template / "hooks").mkdir()
            hook = template / "hooks" / "pre-receive"
            hook.write_text(PRE_RECEIVE, encoding="utf-8")
            hook.chmod(0o755)
        return template

    def fork(self, source: str, target: str) -> None:
        path = self.path(target)
        if path.exists():
            shutil.rmtree(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(self.path(source), path)

    def append(self, full_name: str, commits: list[CommitSpec]) -> None:
        """Add commits to an existing repository (branches of a fork made by a scenario)."""
        if commits:
            self._git(
                self.path(full_name), "fast-import", "--quiet", data=fast_import_stream(commits)
            )

    def merge_upstream(self, upstream: str, fork: str, branch: str) -> str:
        """Fast-forward ``fork``'s ``branch`` to upstream's; returns the outcome name."""
        fork_path = self.path(fork)
        self._git(
            fork_path,
            "fetch",
            "-q",
            str(self.path(upstream)),
            f"+refs/heads/{branch}:refs/upstream/{branch}",
        )
        ours = self._git(fork_path, "rev-parse", f"refs/heads/{branch}").strip()
        theirs = self._git(fork_path, "rev-parse", f"refs/upstream/{branch}").strip()
        if ours == theirs:
            return "none"
        base = self._git(fork_path, "merge-base", ours, theirs).strip()
        if base != ours:
            return "conflict"
        self._git(fork_path, "update-ref", f"refs/heads/{branch}", theirs)
        return "fast-forward"

    def delete_branch(self, full_name: str, branch: str) -> None:
        self._git(self.path(full_name), "update-ref", "-d", f"refs/heads/{branch}")

    def remove(self, full_name: str) -> None:
        shutil.rmtree(self.path(full_name), ignore_errors=True)

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
        shutil.rmtree(self.root.parent / f"{self.root.name}-template.git", ignore_errors=True)

    def reset(self) -> None:
        for child in self.root.iterdir():
            shutil.rmtree(child, ignore_errors=True)

    # -- reading

    def branches(self, full_name: str) -> list[BranchHead]:
        if not self.exists(full_name):
            return []
        out = self._git(
            self.path(full_name),
            "for-each-ref",
            "--sort=refname",
            "--format=%(refname:lstrip=2)%00%(objectname)%00%(committerdate:iso-strict)%00%(subject)%00%(authorname)",
            "refs/heads",
        )
        heads = []
        for line in out.splitlines():
            name, sha, date, subject, author = line.split("\0")
            heads.append(BranchHead(name, sha, _utc_iso(date), subject, author))
        return heads

    def branch(self, full_name: str, name: str) -> BranchHead | None:
        return next((b for b in self.branches(full_name) if b.name == name), None)

    def resolve(self, full_name: str, ref: str) -> str | None:
        """The commit ``ref`` (branch, tag or SHA) names, or None."""
        if not self.exists(full_name) or ref.startswith("-"):
            return None
        try:
            out = self._git(
                self.path(full_name), "rev-parse", "--verify", "-q", f"{ref}^{{commit}}"
            )
        except RuntimeError:
            return None
        return out.strip()

    def read_path(self, full_name: str, sha: str, path: str) -> tuple[str, object] | None:
        """``("file", (bytes, blob sha))``, ``("dir", [(name, type, sha, size)])`` or None."""
        repo = self.path(full_name)
        path = path.strip("/")
        if path:
            line = self._git(repo, "ls-tree", "-l", sha, "--", path).strip()
            if not line:
                return None
            meta, _ = line.split("\t", 1)
            _mode, kind, blob, _size = meta.split()
            if kind == "blob":
                data = subprocess.run(
                    ["git", "cat-file", "blob", blob], cwd=repo, capture_output=True, check=True
                ).stdout
                return "file", (data, blob)
        entries = []
        listing = self._git(repo, "ls-tree", "-l", sha, "--", f"{path}/" if path else ".")
        for line in listing.splitlines():
            meta, name = line.split("\t", 1)
            _mode, kind, blob, size = meta.split()
            size_int = int(size) if size.isdigit() else 0
            entries.append((name, "file" if kind == "blob" else "dir", blob, size_int))
        return "dir", entries

    def diff(
        self, base_repo: str, base_sha: str, head_repo: str, head_sha: str
    ) -> tuple[str, list[FileChange]]:
        """The three-dot diff of a PR and its per-file changes."""
        repo = self.path(head_repo)
        env = {"GIT_ALTERNATE_OBJECT_DIRECTORIES": str(self.path(base_repo) / "objects")}
        span = f"{base_sha}...{head_sha}"
        text = self._git(repo, "diff", "--no-color", "--no-ext-diff", "-M", span, env=env)
        status = self._git(repo, "diff", "--name-status", "-M", "-z", span, env=env)
        numstat = self._git(repo, "diff", "--numstat", "-M", "-z", span, env=env)
        return text, _file_changes(text, status, numstat)

    # -- smart HTTP

    def http_backend(
        self,
        *,
        method: str,
        path_info: str,
        query: str,
        content_type: str,
        body: bytes,
        remote_user: str | None,
        extra_env: dict[str, str] | None = None,
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        env = {
            **os.environ,
            **GIT_ENV,
            "GIT_PROJECT_ROOT": str(self.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": method,
            "PATH_INFO": path_info,
            "QUERY_STRING": query,
            "CONTENT_TYPE": content_type,
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": "127.0.0.1",
            "GATEWAY_INTERFACE": "CGI/1.1",
            **(extra_env or {}),
        }
        if remote_user:
            env["REMOTE_USER"] = remote_user
        completed = subprocess.run(
            ["git", "http-backend"], input=body, capture_output=True, env=env, check=False
        )
        return parse_cgi(completed.stdout)


def parse_cgi(output: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
    head, _, body = output.partition(b"\r\n\r\n")
    if not _:
        head, _, body = output.partition(b"\n\n")
    status = 200
    headers: list[tuple[str, str]] = []
    for line in head.decode("latin-1").splitlines():
        name, _, value = line.partition(":")
        if name.lower() == "status":
            status = int(value.strip().split()[0])
        elif name:
            headers.append((name.strip(), value.strip()))
    return status, headers, body


def fast_import_stream(commits: list[CommitSpec]) -> bytes:
    out = bytearray()
    made: set[str] = set()
    for mark, commit in enumerate(commits, start=1):
        stamp = f"{int(commit.when.timestamp())} +0000"
        message = commit.message.encode()
        out += f"commit refs/heads/{commit.branch}\nmark :{mark}\n".encode()
        out += f"author {commit.author} <{commit.email}> {stamp}\n".encode()
        out += f"committer {commit.author} <{commit.email}> {stamp}\n".encode()
        out += f"data {len(message)}\n".encode() + message + b"\n"
        if commit.parent:
            # A branch made earlier in this stream is named plainly; "^0" reads one already on disk.
            suffix = "" if commit.parent in made else "^0"
            out += f"from refs/heads/{commit.parent}{suffix}\n".encode()
        made.add(commit.branch)
        for path, content in sorted(commit.files.items()):
            if content is None:
                out += f"D {path}\n".encode()
                continue
            data = content.encode()
            out += f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n"
        out += b"\n"
    return bytes(out)


def _utc_iso(text: str) -> str:
    from datetime import UTC

    return datetime.fromisoformat(text).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _file_changes(diff: str, name_status: str, numstat: str) -> list[FileChange]:
    statuses: list[tuple[str, str, str | None]] = []
    fields = name_status.split("\0")
    index = 0
    while index < len(fields) and fields[index]:
        code = fields[index]
        if code.startswith(("R", "C")):
            statuses.append((code[0], fields[index + 2], fields[index + 1]))
            index += 3
        else:
            statuses.append((code[0], fields[index + 1], None))
            index += 2
    counts: dict[str, tuple[int, int]] = {}
    parts = numstat.split("\0")
    index = 0
    while index < len(parts) and parts[index]:
        added_text, deleted_text, name = parts[index].split("\t", 2)
        if name == "":  # a rename: the two names follow
            name = parts[index + 2]
            index += 3
        else:
            index += 1
        counts[name] = (_int(added_text), _int(deleted_text))
    patches = _split_patches(diff)
    names = {"A": "added", "D": "removed", "M": "modified", "R": "renamed", "C": "copied"}
    changes = []
    for code, name, previous in statuses:
        added, deleted = counts.get(name, (0, 0))
        changes.append(
            FileChange(
                filename=name,
                status=names.get(code, "changed"),
                additions=added,
                deletions=deleted,
                patch=patches.get(name, ""),
                previous_filename=previous,
            )
        )
    return changes


def _int(text: str) -> int:
    return int(text) if text.isdigit() else 0


def _split_patches(diff: str) -> dict[str, str]:
    """Per-file hunks (from the first ``@@``) keyed by the new file name, as GitHub's ``patch``."""
    patches: dict[str, str] = {}
    for block in diff.split("diff --git ")[1:]:
        lines = block.splitlines()
        name = ""
        for line in lines:
            if line.startswith("+++ "):
                name = line[6:] if line.startswith("+++ b/") else name
            elif line.startswith("--- a/") and not name:
                name = line[6:]
        if not name:
            header = lines[0].split(" b/", 1)
            name = header[1] if len(header) == 2 else ""
        hunk_start = next((i for i, line in enumerate(lines) if line.startswith("@@")), None)
        patches[name] = "\n".join(lines[hunk_start:]) if hunk_start is not None else ""
    return patches
