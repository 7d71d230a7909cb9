"""``tusk init --apply``'s plan (pure): the deployment wanted, what GitHub has of it,
and the steps between them, in the order they must be taken.

Every step says whether it is done already and why. What "done" means for each:

- the control repository exists (used as it is: its visibility is not changed);
- a file is done when GitHub holds exactly its text (the blob sha GitHub answers
  is git's hash of the content, so the text is compared without reading it);
- a label or a state issue is done when it exists (state issues as
  ``tusk.issues.state`` finds them: by label and marker, written by the bot);
- the bot is done when it is a collaborator with write access; an open
  invitation only needs accepting;
- a secret cannot be read back from GitHub, so one stored under its name is left
  alone, unless ``--rotate-secrets`` is given and its value is exported here; a
  secret neither stored nor exported blocks the plan (nothing is written);
- a workflow is done when GitHub lists it active; one not listed yet (committed by
  this run) or disabled is enabled.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field

DONE, BLOCKED = "done", "blocked"
MARK = {DONE: "✓", BLOCKED: "✗"}


def blob_sha(text: str) -> str:
    """git's blob hash of ``text``: the ``sha`` GitHub's Contents API answers for a file."""
    data = text.encode("utf-8")
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


@dataclass(frozen=True)
class Wanted:
    repo: str  # OWNER/NAME
    private: bool
    bot: str
    files: Mapping[str, str]  # path -> text
    labels: tuple[str, ...]
    state_kinds: tuple[str, ...]
    secrets: tuple[str, ...]  # the names the workflows read
    exported: frozenset[str]  # the names whose value is in the environment
    rotate_secrets: bool = False


@dataclass(frozen=True)
class Seen:
    """What GitHub has of the deployment (``NOTHING``: the repository does not exist)."""

    repo_exists: bool
    files: Mapping[str, str] = field(default_factory=dict)  # path -> blob sha
    labels: frozenset[str] = frozenset()  # lower case
    state_kinds: frozenset[str] = frozenset()
    bot_can_push: bool = False
    bot_invited: bool = False
    secrets: frozenset[str] = frozenset()
    workflows: Mapping[str, str] = field(default_factory=dict)  # path -> state


NOTHING = Seen(repo_exists=False)


@dataclass(frozen=True)
class Step:
    kind: str  # repo, file, label, invite, accept, state-issue, secret, workflow
    target: str
    action: str  # what to do (create, update, ...), DONE, or BLOCKED
    why: str
    sha: str | None = None  # a file's blob sha to replace

    @property
    def todo(self) -> bool:
        return self.action not in (DONE, BLOCKED)

    def line(self) -> str:
        mark = MARK.get(self.action, "→")
        what = self.target if self.action in MARK else f"{self.action} {self.target}"
        return f"{mark} {self.kind} {what}: {self.why}"


def plan(wanted: Wanted, seen: Seen) -> list[Step]:
    """Every step, in order, each done, to do, or blocked."""
    return [
        _repo(wanted, seen),
        *_files(wanted, seen),
        *_labels(wanted, seen),
        *_bot(wanted, seen),
        *_state_issues(wanted, seen),
        *_secrets(wanted, seen),
        *_workflows(wanted, seen),
    ]


def _repo(wanted: Wanted, seen: Seen) -> Step:
    if seen.repo_exists:
        return Step("repository", wanted.repo, DONE, "exists; used as it is")
    kind = "private" if wanted.private else "public"
    return Step("repository", wanted.repo, "create", f"a {kind} repository")


def _files(wanted: Wanted, seen: Seen) -> list[Step]:
    steps = []
    for path, text in wanted.files.items():
        have = seen.files.get(path)
        if have is None:
            steps.append(Step("file", path, "commit", "new"))
        elif have == blob_sha(text):
            steps.append(Step("file", path, DONE, "unchanged"))
        else:
            steps.append(Step("file", path, "update", "differs from what tusk init writes", have))
    return steps


def _labels(wanted: Wanted, seen: Seen) -> list[Step]:
    return [
        Step("label", name, DONE, "exists")
        if name.lower() in seen.labels
        else Step("label", name, "create", "missing")
        for name in dict.fromkeys(wanted.labels)
    ]


def _bot(wanted: Wanted, seen: Seen) -> list[Step]:
    if seen.bot_can_push:
        return [
            Step("collaborator", wanted.bot, DONE, "may write"),
            Step("invitation", wanted.bot, DONE, "nothing to accept"),
        ]
    invite = (
        Step("collaborator", wanted.bot, DONE, "invited; the invitation waits")
        if seen.bot_invited
        else Step("collaborator", wanted.bot, "invite", "write (push) access")
    )
    accept = Step("invitation", wanted.bot, "accept", "as the bot (TUSK_BOT_TOKEN)")
    return [invite, accept]


def _state_issues(wanted: Wanted, seen: Seen) -> list[Step]:
    return [
        Step("state issue", kind, DONE, "exists")
        if kind in seen.state_kinds
        else Step("state issue", kind, "create", "as the bot")
        for kind in wanted.state_kinds
    ]


def _secrets(wanted: Wanted, seen: Seen) -> list[Step]:
    steps = []
    for name in wanted.secrets:
        stored, exported = name in seen.secrets, name in wanted.exported
        if stored and wanted.rotate_secrets and exported:
            steps.append(Step("secret", name, "store", "stored anew (--rotate-secrets)"))
        elif stored:
            steps.append(
                Step(
                    "secret",
                    name,
                    DONE,
                    "stored (GitHub shows no value, so it is left as it is; "
                    "--rotate-secrets stores the exported value anew)",
                )
            )
        elif exported:
            steps.append(Step("secret", name, "store", "sealed with the repository's key"))
        else:
            steps.append(Step("secret", name, BLOCKED, f"not stored: export {name} first"))
    return steps


def _workflows(wanted: Wanted, seen: Seen) -> list[Step]:
    steps = []
    for path in wanted.files:
        if not path.startswith(".github/workflows/"):
            continue
        state = seen.workflows.get(path)
        if state == "active":
            steps.append(Step("workflow", path, DONE, "active"))
        elif state is None:
            steps.append(Step("workflow", path, "enable", "new; GitHub starts it active"))
        else:
            steps.append(Step("workflow", path, "enable", f"GitHub has it {state}"))
    return steps
