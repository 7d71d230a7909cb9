"""``push_branch`` in approval mode: the branch checked as for a push, then kept as a bundle.

Nothing reaches the fork: the server checks what the push would publish
(``Pusher.check_publishable``), writes the new commits as a git bundle from its
private repository into the run folder, and describes them (``git diff --stat``
against upstream's default branch, the commits one per line) for the preview.
The apply job pushes from that bundle once a person approved it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tusk.approval.staging import APPROVAL_DIR, MAX_BUNDLE_BYTES
from tusk.mcp.gate.policy import Refused
from tusk.mcp.push import bundle
from tusk.mcp.push.git_push import Pusher, PushFailed, Taken

DIFF_STAT_CHARS = 4_000


def keep_branch(pusher: Pusher, taken: Taken, run_dir: Path) -> dict[str, Any]:
    """Check ``taken`` as a push would and keep it; returns what the staged request adds."""
    pusher.check_publishable(taken)
    if not pusher.new_commits(taken):
        raise Refused(
            "INVALID_PUSH",
            f"{taken.branch} has no commits that upstream's default branch lacks; commit your "
            "changes on it first.",
        )
    folder = run_dir / APPROVAL_DIR / "bundles"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{taken.sha}.bundle"
    ref = f"refs/heads/{taken.branch}"
    pusher.git.run(["bundle", "create", str(path), ref, f"^{taken.base_ref}"], cwd=pusher.repo_dir)
    size = path.stat().st_size
    if size > MAX_BUNDLE_BYTES:
        path.unlink()
        raise Refused(
            "LIMIT_EXCEEDED",
            f"the branch's new commits make a {size:,}-byte bundle; a run waiting for approval "
            f"keeps at most {MAX_BUNDLE_BYTES:,} bytes. Push fewer or smaller changes.",
        )
    span = f"{taken.base_ref}...{taken.sha}"
    stat = pusher.git.run(["diff", "--stat=100", "--no-color", span], cwd=pusher.repo_dir)
    log = pusher.git.run(
        ["log", "--no-color", "--format=%h %s", f"{taken.base_ref}..{taken.sha}"],
        cwd=pusher.repo_dir,
    )
    described = (log.strip() + "\n\n" + stat.rstrip())[:DIFF_STAT_CHARS]
    return {"bundle_file": str(path), "diff_stat": described}


def take_kept(pusher: Pusher, branch: str, data: bytes) -> Taken:
    """The branch from the bundle the run kept, imported as ``Pusher.take`` imports the
    agent's: the header checked (one ref, the branch), the pack indexed strictly, the
    whole history present. Its base may be an older commit of upstream's default branch
    (upstream moved since the run); any other prerequisite is refused."""
    upstream = pusher.read_gateway.get(f"/repos/{pusher.config.trigger_repo}")
    base_ref = pusher.fetch_upstream(upstream)
    header = bundle.parse_bundle(data)
    for prerequisite in header.prerequisites:
        try:
            pusher.git.run(
                ["merge-base", "--is-ancestor", prerequisite, base_ref], cwd=pusher.repo_dir
            )
        except PushFailed:
            raise bundle.invalid(
                f"it builds on {prerequisite[:12]}, which upstream's default branch no longer has"
            ) from None
    tip = bundle.check_bundle(header, branch=branch, offered=header.prerequisites)
    pusher.import_pack(data[header.pack_offset :], tip=tip, base_ref=base_ref)
    pusher.git.run(["update-ref", f"refs/heads/{branch}", tip], cwd=pusher.repo_dir)
    return Taken(branch=branch, sha=tip, base_ref=base_ref, upstream=upstream)
