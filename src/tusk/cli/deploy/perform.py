"""``tusk init --apply``: each step of the plan performed through the gateway.

The owner's token creates the repository, commits the files, makes the labels,
invites the bot, stores the secrets and enables the workflows; the bot's token
accepts the invitation and opens the state issues (which only count when the bot
wrote them). A create whose answer was lost may have landed, so it is looked for
before it is sent again (``tusk.github.once``): the repository by its name, a file
by its blob sha, a label by its name; the state issues by their nonce
(``tusk.issues.state``). The secrets' values leave only sealed (``tusk.github.sealing``).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from pydantic import SecretStr

from tusk.cli.deploy.look import file_sha
from tusk.cli.deploy.plan import Step, Wanted, blob_sha
from tusk.contracts.config import Settings
from tusk.errors import UserError
from tusk.github.gateway import Gateway, NotFound
from tusk.github.once import create_once
from tusk.github.sealing import seal
from tusk.issues.state import StateStore
from tusk.issues.state_codec import StateKind

COMMIT_MESSAGE = "tusk init --apply: {path}"
T = TypeVar("T")


@dataclass
class Applier:
    owner: Gateway
    bot: Gateway
    wanted: Wanted
    settings: Settings
    values: Mapping[str, SecretStr]  # secret name -> value, from the environment
    _key: dict[str, str] = field(default_factory=dict)

    def do(self, step: Step) -> str:
        """Perform one step to do; returns what was done, in a few words."""
        act = {
            "repository": self.repository,
            "file": self.file,
            "label": self.label,
            "collaborator": self.invite,
            "invitation": self.accept,
            "state issue": self.state_issue,
            "secret": self.secret,
            "workflow": self.workflow,
        }[step.kind]
        return act(step)

    def _once(self, send: Callable[[], T], find: Callable[[], T | None], what: str) -> T:
        return create_once(send, find, sleep=self.owner.sleep, what=what)

    # -- the owner's steps

    def repository(self, step: Step) -> str:
        owner, name = self.wanted.repo.split("/")
        me = str(self.owner.get("/user")["login"])
        account = self.owner.get(f"/users/{owner}")
        if account.get("type") == "Organization":
            path = f"/orgs/{owner}/repos"
        elif owner.lower() == me.lower():
            path = "/user/repos"
        else:
            raise UserError(
                f"TUSK_OWNER_TOKEN belongs to {me}, who cannot create {self.wanted.repo}",
                f"Export the token of {owner} (or of a member of the organisation {owner}), "
                f"or create {self.wanted.repo} by hand and run again.",
            )
        body = {"name": name, "private": self.wanted.private, "has_wiki": False}

        def send() -> Any:
            return self.owner.post(path, json=body, may_repeat=False).body

        def find() -> Any:
            try:
                return self.owner.get(f"/repos/{self.wanted.repo}")
            except NotFound:
                return None

        self._once(send, find, f"the repository {self.wanted.repo}")
        return "created"

    def file(self, step: Step) -> str:
        repo, path, text = self.wanted.repo, step.target, self.wanted.files[step.target]
        body: dict[str, str] = {
            "message": COMMIT_MESSAGE.format(path=path),
            "content": base64.b64encode(text.encode("utf-8")).decode(),
        }
        if step.sha:
            body["sha"] = step.sha

        def send() -> str:
            self.owner.put(f"/repos/{repo}/contents/{path}", json=body, may_repeat=False)
            return blob_sha(text)

        def find() -> str | None:  # landed: GitHub holds exactly this text
            sha = file_sha(self.owner, repo, path)
            return sha if sha == blob_sha(text) else None

        self._once(send, find, f"the commit of {path}")
        return "updated" if step.sha else "committed"

    def label(self, step: Step) -> str:
        path = f"/repos/{self.wanted.repo}/labels"

        def send() -> Any:
            return self.owner.post(path, json={"name": step.target}, may_repeat=False).body

        def find() -> Any:
            names = {str(label["name"]).lower(): label for label in self.owner.paginate(path)}
            return names.get(step.target.lower())

        self._once(send, find, f"the label {step.target}")
        return "created"

    def invite(self, step: Step) -> str:
        # A PUT: sent again, GitHub answers the same open invitation.
        self.owner.put(
            f"/repos/{self.wanted.repo}/collaborators/{self.wanted.bot}",
            json={"permission": "push"},
        )
        return "invited"

    def secret(self, step: Step) -> str:
        repo = self.wanted.repo
        if not self._key:
            self._key.update(self.owner.get(f"/repos/{repo}/actions/secrets/public-key"))
        sealed = seal(self.values[step.target], self._key["key"])
        self.owner.put(  # a PUT: the same value stored twice is stored once
            f"/repos/{repo}/actions/secrets/{step.target}",
            json={"encrypted_value": sealed, "key_id": self._key["key_id"]},
        )
        return "stored"

    def workflow(self, step: Step) -> str:
        name = step.target.rsplit("/", 1)[-1]
        try:
            self.owner.put(f"/repos/{self.wanted.repo}/actions/workflows/{name}/enable")
        except NotFound:
            return "not listed by GitHub yet (a new workflow starts active)"
        return "enabled"

    # -- the bot's steps

    def accept(self, step: Step) -> str:
        mine = [
            invitation
            for invitation in self.bot.paginate("/user/repository_invitations")
            if str((invitation.get("repository") or {}).get("full_name", "")).lower()
            == self.wanted.repo.lower()
        ]
        if mine:
            path = f"/user/repository_invitations/{mine[0]['id']}"
            # Accepted twice, GitHub answers 404: after a lost answer, look first.
            self._once(
                lambda: self.bot.patch(path, may_repeat=False).status,
                self._bot_may_push,
                "accepting the invitation",
            )
            return "accepted"
        raise UserError(
            f"{self.wanted.bot} has no invitation to {self.wanted.repo}",
            "Check that TUSK_BOT_TOKEN is the bot's (with the repo scope) and run again.",
        )

    def _bot_may_push(self) -> int | None:
        try:
            body = self.bot.get(f"/repos/{self.wanted.repo}")
        except NotFound:
            return None
        return 204 if (body.get("permissions") or {}).get("push") else None

    def state_issue(self, step: Step) -> str:
        # The store looks for the issue first and sends its create once, by nonce.
        StateStore(self.bot, self.settings).state_issue(cast(StateKind, step.target))
        return "created"
