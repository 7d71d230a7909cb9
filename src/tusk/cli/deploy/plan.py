"""``tusk init --apply``'s plan (pure): the deployment wanted, what GitHub has of it,
and the steps between them, in the order they must be taken.

Every step says whether it is done already and why. What "done" means for each:

- the control repository exists (used as it is: its visibility is not changed);
- a file is done when GitHub holds exactly its text (the blob sha GitHub answers
  is git's hash of the content, so the text is compared without reading it);
  ``tusk.yml`` is the owner's policy once it exists: it is kept as it is (only the
  callers and the secrets checklist follow the release), unless
  ``--replace-config`` asks for tusk init's, whose differences are then shown;
- a label or a state issue is done when it exists (state issues as
  ``tusk.issues.state`` finds them: by label and marker, written by the bot);
- the bot is done when it is a collaborator with write access; an open
  invitation only needs accepting;
- a secret cannot be read back from GitHub, so one stored under its name is left
  alone, unless ``--rotate-secrets`` is given and its value is exported here; a
  secret neither stored nor exported blocks the plan (nothing is written);
- a workflow is done when GitHub lists it active; one not listed yet (committed by
  this run) or disabled is enabled.

Before any step, ``checks`` says whether the steps can be taken at all: every
allowed user is a GitHub user, the control repository's owner exists and the
owner's token may create in it (or is its admin when it exists). A ✗ there, like
a blocked step, means nothing is written.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from tusk.cli.doctor import runs_a_day

DONE, BLOCKED = "done", "blocked"
FREE_MINUTES = 2000  # GitHub Free's Actions minutes a month for private repositories
CRON = re.compile(r"^\s*-\s*cron:\s*['\"]([^'\"]+)['\"]", re.M)
PLACEHOLDER = re.compile(
    r"\.\.\.|…|[<>\s]|^(?:sk-ant-|ghp_)?(?:x+|yours|the_bots|your[-_]?\w*|changeme)$", re.I
)


def is_placeholder(value: str) -> bool:
    """An example value copied from documentation (``sk-ant-...``, ``ghp_yours``), not a
    secret: storing it would make every run fail at its first request."""
    return bool(PLACEHOLDER.search(value.strip())) or not value.strip()


def poll_cost(poll_text: str, private: bool) -> list[str]:
    """What the poll workflow's schedule costs a month, and how to change it (pure)."""
    crons = CRON.findall(poll_text)
    runs = sum(n for n in (runs_a_day(cron) for cron in crons) if n)
    if not runs:
        return ["the poll workflow has no schedule this plan can count"]
    month = runs * 30
    when = " and ".join(f"`{cron}`" for cron in crons)
    lines = [f"poll.yml runs {when}: {runs:,} polls a day, {month:,} in a 30-day month"]
    if private:
        lines.append(
            f"in a private repository GitHub bills each poll at least one minute: about "
            f"{month:,} Actions minutes a month ({month / FREE_MINUTES:.1f} × GitHub Free's "
            f"{FREE_MINUTES:,}), agent runs on top"
        )
    else:
        lines.append("in a public repository jobs on GitHub's standard runners are free")
    lines.append(
        "to change it: edit the cron line of .github/workflows/poll.yml (README's cost "
        "table: every 15 min is 2,880 a month, hourly 720), or poll from a cron host"
        + ("" if not private else ", or --public for a public control repository")
    )
    return lines


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
    config: str = "tusk.yml"  # the owner's policy: kept once it exists
    replace_config: bool = False
    allowed_users: tuple[str, ...] = ()
    owner_login: str = ""  # whose TUSK_OWNER_TOKEN is


# Where the control repository would be created, as the owner's token stands to it.
YOURS, ORG_MEMBER, ORG_OUTSIDER, OTHER_USER, NO_ACCOUNT = (
    "yours",
    "org member",
    "org outsider",
    "other user",
    "no account",
)


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
    config_text: str | None = None  # the owner's tusk.yml as GitHub holds it
    private: bool | None = None  # the repository's visibility, when it exists
    owner_admin: bool = True  # the owner's token administers the repository
    account: str = YOURS  # where a repository to create would go
    unknown_users: frozenset[str] = frozenset()  # allowed users GitHub does not know


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


def checks(wanted: Wanted, seen: Seen) -> list[Step]:
    """What must hold before anything is written, each ✓ or ✗ with the real fix."""
    found = [
        Step(
            "allowed user",
            login,
            BLOCKED,
            "GitHub has no such user: check the spelling of "
            "--allowed-user (or allowed_users in your tusk.yml)",
        )
        if login.lower() in seen.unknown_users
        else Step("allowed user", login, DONE, "a GitHub user")
        for login in wanted.allowed_users
    ]
    owner = wanted.repo.split("/")[0]
    me = wanted.owner_login or "you"
    if seen.repo_exists:
        found.append(
            Step("your rights", wanted.repo, DONE, f"{me} administers it")
            if seen.owner_admin
            else Step(
                "your rights",
                wanted.repo,
                BLOCKED,
                f"{me} is not an admin of it (the secrets and the bot's invitation need one): "
                f"export the token of an admin of {wanted.repo}, or ask one to make {me} admin",
            )
        )
        return found
    why = {
        YOURS: (DONE, f"{me} may create it"),
        ORG_MEMBER: (DONE, f"{me} is a member of the organisation {owner}"),
        ORG_OUTSIDER: (
            BLOCKED,
            f"{me} is not a member of the organisation {owner}: export the token of a member "
            f"who may create repositories there, or ask an owner of {owner} to create "
            f"{wanted.repo} and make {me} its admin, then run again",
        ),
        OTHER_USER: (
            BLOCKED,
            f"it would be {owner}'s and TUSK_OWNER_TOKEN belongs to {me}: export {owner}'s token, "
            f"or use --control-repo {me}/{wanted.repo.split('/')[1]}",
        ),
        NO_ACCOUNT: (
            BLOCKED,
            f"GitHub has no user or organisation {owner}: check the spelling of --control-repo",
        ),
    }[seen.account]
    found.append(Step("your rights", wanted.repo, *why))
    return found


def config_diff(wanted: Wanted, seen: Seen) -> list[str]:
    """The lines ``--replace-config`` would change in the owner's tusk.yml (pure)."""
    if seen.config_text is None:
        return []
    return list(
        difflib.unified_diff(
            seen.config_text.splitlines(),
            wanted.files[wanted.config].splitlines(),
            f"{wanted.config} (yours, on GitHub)",
            f"{wanted.config} (tusk init's)",
            lineterm="",
        )
    )


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
        elif path == wanted.config and not wanted.replace_config:
            steps.append(
                Step(
                    "file",
                    path,
                    DONE,
                    "yours, kept as it is (your policy; --replace-config writes tusk init's "
                    "and shows what it changes)",
                )
            )
        elif path == wanted.config:
            steps.append(Step("file", path, "replace", "with tusk init's (--replace-config)", have))
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
