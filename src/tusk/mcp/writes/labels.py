"""``add_label``: one label on an issue or pull request this run opened.

Its spec (``tusk.mcp.gate.specs``, in its catalog entry) says the rest: an ``issue`` write in the
permission grammar, only on the run's own threads, counted toward the run's writes;
undo removes the label again (the audit's ``created`` is ``label``, its URL the
thread's with ``#label=<name>``).
"""

from __future__ import annotations

from urllib.parse import quote

from pydantic import BaseModel

from tusk.mcp.gate.posted import check_secrets
from tusk.mcp.gate.refusal import Refused
from tusk.mcp.server.runtime import Runtime
from tusk.mcp.writes.outcomes import Prepared, WriteOutcome

MAX_LABEL_CHARS = 50  # GitHub's own limit on a label's name


class AddLabel(BaseModel):
    repo: str
    number: int
    label: str


def prepare_label(rt: Runtime, a: AddLabel) -> Prepared:
    check_secrets(a.label, "label", rt.secrets)
    label = " ".join(a.label.split())
    if not label or len(label) > MAX_LABEL_CHARS or "," in label:
        raise Refused(
            "FORBIDDEN_OPERATION",
            f"a label is one name of 1 to {MAX_LABEL_CHARS} characters without commas.",
        )
    path = f"/repos/{a.repo}/issues/{a.number}/labels"
    summary = f"label {a.repo}#{a.number} {label!r}"
    return Prepared(summary, {"method": "POST", "path": path, "json": {"labels": [label]}})


def send_label(rt: Runtime, a: AddLabel, p: Prepared) -> WriteOutcome:
    # Adding a label twice is harmless, so a lost answer may be repeated.
    rt.write_gateway.post(p.request["path"], json=p.request["json"])
    thread = rt.write_gateway.get(f"/repos/{a.repo}/issues/{a.number}")
    label = p.request["json"]["labels"][0]
    url = f"{thread['html_url']}#label={quote(label, safe='')}"
    return WriteOutcome(f"labelled {a.repo}#{a.number} {label!r}", url, "label")
