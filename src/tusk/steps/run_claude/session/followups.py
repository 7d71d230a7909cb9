"""The run's side of follow-ups (MISSION C1): read from the log issue, handed to the
agent at safe points, each delivery recorded.

The poller records each follow-up as the bot's comment on the run's log issue
(``tusk.issues.followups``). At each safe point of the session (the end of a
turn of the main session, whose input is streamed; before each self-check,
as a ``--resume`` pass) the run reads the log issue's comments, takes the
follow-ups not yet dealt with, and hands each to the agent as a new user
message: its text neutralised like the context, under its author's name and
trust. Each delivery goes into the saved event stream, onto the log issue,
and narrows what the rest of the run may do (``PermissionConfig.narrowed_by``,
told to the MCP server through ``tusk.contracts.passes``): a follow-up's
permission marker never widens the run.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field

from tusk.contracts.models import PermissionConfig, RunMetadata
from tusk.errors import TuskError
from tusk.github.gateway import Gateway
from tusk.github.trust import shown
from tusk.issues import followups
from tusk.issues.followups import Followup
from tusk.issues.run_facts import describe_permissions
from tusk.text.markers import render_marker
from tusk.text.neutralise import neutralise
from tusk.text.render import render


def permissions_of(followup: Followup) -> PermissionConfig:
    """The follow-up's own permissions; a record that cannot be read allows no write."""
    try:
        return PermissionConfig.model_validate(followup.permissions)
    except ValueError:
        return PermissionConfig(operations=(), error="the follow-up's permissions were unreadable")


def message(followup: Followup, permissions: PermissionConfig) -> str:
    """The user message one follow-up becomes: neutralised like the context."""
    trusted = followup.trust_level in ("owner", "collaborator")
    cleaned = neutralise(followup.text, trusted=trusted)
    return render(
        "followup.md.j2",
        followup=followup,
        trust=shown(followup.trust_level, followup.trust_source),
        text=cleaned.text,
        flags=cleaned.flags,
        permissions=describe_permissions(permissions),
    )


@dataclass
class Inbox:
    """The follow-ups of one run: read from its log issue, each handed over once."""

    gateway: Gateway
    run: RunMetadata
    bot: str
    permissions: PermissionConfig
    # Told each narrowing, so the MCP server enforces it from the next call on.
    on_narrow: Callable[[PermissionConfig], None] = lambda permissions: None
    # Told each delivery, for the saved event stream.
    on_deliver: Callable[[Followup], None] = lambda followup: None
    handled: set[str] = field(default_factory=set)

    def _comments(self) -> list[dict[str, object]]:
        return followups.read(self.gateway, self.run.control_repo, self.run.log_issue_number)

    def waiting(self) -> list[Followup]:
        """Follow-ups not yet dealt with. GitHub failing here delays them to the next safe
        point; it never ends the run."""
        try:
            found = followups.pending(self._comments(), bot=self.bot)
        except TuskError:
            return []
        return [f for f in found if f.node not in self.handled]

    def deliver(self, where: str) -> list[str]:
        """The messages of every waiting follow-up, each recorded as delivered ``where``."""
        messages = []
        for followup in self.waiting():
            self.handled.add(followup.node)
            self.permissions = self.permissions.narrowed_by(permissions_of(followup))
            self.on_narrow(self.permissions)
            messages.append(message(followup, self.permissions))
            self.on_deliver(followup)
            self._note(followup, "delivered", f"📬 Follow-up {followup.url} delivered {where}.")
        return messages

    def close(self) -> list[Followup]:
        """At the end of the run: what arrived too late for it, each said once on the log
        issue, and on the thread, where the people who wrote them read."""
        late = self.waiting()
        for followup in late:
            self.handled.add(followup.node)
            self._note(
                followup,
                "missed",
                f"📭 Follow-up {followup.url} arrived after the run's last pass; "
                "it was not delivered.",
            )
        if late:
            self._tell_thread(late)
        return late

    def _tell_thread(self, late: list[Followup]) -> None:
        number = self.run.thread_number
        if number is None:
            return
        lines = [
            render_marker("followup-delivered", {"jobid": self.run.jobid, "how": "missed"}),
            "📭 These follow-ups came after the run could take them; they were not "
            "delivered. Mention the bot again to start a run with them:",
            *(f"- {followup.url}" for followup in late),
        ]
        with contextlib.suppress(TuskError):  # the log issue says it anyway
            self.gateway.post(
                f"/repos/{self.run.repo}/issues/{number}/comments",
                json={"body": "\n".join(lines) + "\n"},
                may_repeat=False,
            )

    def _note(self, followup: Followup, how: str, note: str) -> None:
        with contextlib.suppress(TuskError):  # the event stream keeps it anyway
            followups.note_delivery(
                self.gateway,
                control_repo=self.run.control_repo,
                log_issue=self.run.log_issue_number,
                followup=followup,
                how=how,
                note=note,
            )
