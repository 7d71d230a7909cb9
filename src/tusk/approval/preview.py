"""The preview of a staged set on the thread that started the run (pure compose).

One bot comment lists each staged write readably (what it does, its target,
the title, the body as it will be posted, quoted inert, the branch's commits
and ``git diff --stat``) with the digest, the expiry, the run log's link and
the two commands. A hidden ``tusk:preview`` marker names the job, the digest
and the log issue, so the apply job and the poller find the pending set from
the thread, and a repeated write-up finds the preview instead of posting another.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tusk.approval.staged_set import StagedOperation, StagedSet, set_digest
from tusk.text.markers import neutralise_markers, render_marker, strip_backlink_footer
from tusk.text.render import render

BODY_CHARS = 6_000  # of each body shown; the log issue holds all of it
PREVIEW_LIMIT = 60_000
_HIDDEN_MARKER = re.compile(r"<!-- tusk:[a-z-]+ \{.*?\} -->")


@dataclass(frozen=True)
class PreviewItem:
    what: str
    target: str
    title: str = ""
    body: str = ""
    branch: str = ""
    diff: str = ""
    fence: str = "```"


@dataclass(frozen=True)
class Preview:
    count: int
    digest: str
    expires: str
    log_url: str
    apply_command: str
    discard_command: str
    items: tuple[PreviewItem, ...]


def item_of(operation: StagedOperation, *, limit: int = BODY_CHARS) -> PreviewItem:
    sent = operation.request.get("json")
    payload = sent if isinstance(sent, dict) else {}
    body = str(payload.get("body") or operation.request.get("body") or "")
    body = _HIDDEN_MARKER.sub("", strip_backlink_footer(body)).rstrip()
    if len(body) > limit:
        body = body[:limit] + "\n\n… (shortened here; the log issue holds the whole body)"
    diff = operation.diff_stat or ""
    longest = max((len(run) for run in re.findall(r"`{3,}", diff)), default=2)
    return PreviewItem(
        what=operation.summary,
        target=operation.target,
        title=str(payload.get("title") or ""),
        body=body,
        branch=str(operation.args.get("branch") or ""),
        diff=diff,
        fence="`" * (longest + 1),
    )


def preview_marker(staged: StagedSet, digest: str) -> str:
    return render_marker(
        "preview",
        {
            "jobid": staged.jobid,
            "digest": digest,
            "control_repo": staged.control_repo,
            "log": staged.log_issue_number,
        },
    )


def preview_body(staged: StagedSet, *, bot: str) -> str:
    """The preview comment, marker first, within GitHub's limit (bodies shortened)."""
    digest = set_digest(staged)
    text = ""
    for limit in (BODY_CHARS, 1_500, 300):
        preview = Preview(
            count=len(staged.operations),
            digest=digest,
            expires=f"{staged.expires_at:%Y-%m-%d %H:%M}",
            log_url=staged.log_issue_url,
            apply_command=f"@{bot} apply {digest}",
            discard_command=f"@{bot} discard",
            items=tuple(item_of(op, limit=limit) for op in staged.operations),
        )
        text = neutralise_markers(render("approval_preview.md.j2", preview=preview))
        if len(text) <= PREVIEW_LIMIT:
            break
    return f"{preview_marker(staged, digest)}\n{text[:PREVIEW_LIMIT]}"
