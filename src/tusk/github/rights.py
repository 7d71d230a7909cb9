"""Confirmed rights: may this login act on this run (MISSION C2, C5, C6)?

Undo, stop, discard and apply act on other people's work, so they are decided
only on what GitHub confirms, never on ``author_association`` (which errs
broad: any invitee, read and triage roles included, and any member of the
owning organisation; ``tusk.github.trust``). A login may act when it is the
run's requester (where the command allows that: not for apply, which needs a
writer, MISSION C5), or when GitHub's permission endpoint
(``GET /repos/{owner}/{repo}/collaborators/{username}/permission``) shows it
write, maintain or admin on every repository the action touches; the owner of
a user's repository is admin there without a request.

GitHub shows that endpoint only to accounts with push access (403 "Must have
push access to view collaborator permission."), and the bot usually works
from its fork: then the role cannot be read, and the command is refused with
why and who can do it instead. Erring narrow is the safe side here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tusk.github.errors import GitHubError, NotFound
from tusk.github.gateway import Gateway

WRITE_ROLES = frozenset({"admin", "maintain", "write"})


@dataclass(frozen=True)
class Role:
    """A login's role on one repository as GitHub showed it; ``role`` None when it could
    not be read, ``unreadable`` then says why."""

    repo: str
    role: str | None
    unreadable: str = ""

    @property
    def writes(self) -> bool:
        return self.role in WRITE_ROLES


@dataclass(frozen=True)
class Rights:
    """The verdict: ``allowed``, what it rests on (or why not), and who may act instead."""

    allowed: bool
    why: str
    who_can: str = ""
    requester: bool = False  # allowed because the login asked for the run

    def refusal(self) -> str:
        """The refusal as one sentence for a reply: why, then who can."""
        return f"{self.why}. {self.who_can}" if self.who_can else self.why


def owns(repo: str, login: str) -> bool:
    return repo.split("/", 1)[0].lower() == login.lower()


def read_role(gateway: Gateway, repo: str, login: str) -> Role:
    """``login``'s role on ``repo`` from GitHub's permission endpoint."""
    if owns(repo, login):
        return Role(repo, "admin")
    try:
        answer = gateway.get(f"/repos/{repo}/collaborators/{login}/permission")
    except NotFound:
        return Role(repo, None, f"GitHub does not show {login}'s role on {repo} (404)")
    except GitHubError as error:
        if error.status != 403:
            said = f"GitHub did not answer {login}'s role on {repo}: {error.title}"
            return Role(repo, None, said)
        # "Must have push access to view collaborator permission": the bot's usual case.
        return Role(
            repo,
            None,
            f"GitHub shows collaborators' roles on {repo} only to accounts with push access, "
            "and the bot has none there",
        )
    role = str(answer.get("role_name") or answer.get("permission") or "none").lower()
    return Role(repo, role)


def judge(
    login: str,
    *,
    roles: Sequence[Role],
    requester: str | None,
    requester_may: bool = True,
) -> Rights:
    """Pure: the verdict over the roles read on every repository the action touches."""
    if requester_may and requester and login.lower() == requester.lower():
        return Rights(True, f"{login} asked for this run", requester=True)
    if roles and all(role.writes for role in roles):
        shown = ", ".join(f"{role.role} on {role.repo}" for role in roles)
        return Rights(True, f"{login} has write access ({shown}), as GitHub shows it")
    problems = [
        role.unreadable if role.role is None else f"role {role.role} on {role.repo}"
        for role in roles
        if not role.writes
    ] or ["no repository to confirm it on"]
    why = f"{login} has no write access GitHub confirms: " + "; ".join(problems)
    if requester_may:
        why = f"{login} did not ask for this run and " + why.removeprefix(f"{login} ")
    return Rights(False, why, who_can(roles, requester, requester_may))


def who_can(roles: Sequence[Role], requester: str | None, requester_may: bool) -> str:
    """Who may do it instead, in words for the person refused."""
    repos = ", ".join(role.repo for role in roles)
    people = [f"someone GitHub shows with write access to {repos}"]
    if requester_may and requester:
        people.insert(0, f"the run's requester, {requester}")
    said = "Who can: " + ", or ".join(people)
    blind = [role.repo for role in roles if role.role is None]
    if blind:
        said += (
            f"; GitHub can show that only once the bot has push access to {', '.join(blind)} "
            "(until then, the repository's owner where a user owns it)"
        )
    return said + "."


def confirmed_rights(
    gateway: Gateway,
    login: str,
    *,
    repos: Iterable[str],
    requester: str | None = None,
    requester_may: bool = True,
) -> Rights:
    """May ``login`` act on a run: its requester (when ``requester_may``), or write access
    read from GitHub's permission endpoint on every one of ``repos`` (the repositories
    the action touches). Reads nothing when the requester asks; never reads
    ``author_association``."""
    if requester_may and requester and login.lower() == requester.lower():
        return judge(login, roles=(), requester=requester)
    unique: dict[str, str] = {}
    for repo in repos:
        unique.setdefault(repo.lower(), repo)
    return judge(
        login,
        roles=[read_role(gateway, repo, login) for repo in unique.values()],
        requester=requester,
        requester_may=requester_may,
    )
