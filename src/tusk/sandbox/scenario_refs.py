"""A scenario's references checked: every author, collaborator, token user, fork
parent and reaction names something the scenario defines."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tusk.sandbox.scenario_shapes import REACTIONS, TOKEN, check_shape
from tusk.sandbox.world import PERMISSIONS


@dataclass
class _Refs:
    users: set[str]
    repos: set[str]
    problems: list[str]

    def user(self, login: Any, where: str) -> None:
        if isinstance(login, str) and login.lower() not in self.users:
            self.problems.append(f"{where}: unknown user {login!r} (add it under users)")

    def repo(self, name: Any, where: str) -> None:
        if isinstance(name, str) and name.lower() not in self.repos:
            self.problems.append(f"{where}: unknown repository {name!r}")


def check_references(data: dict[str, Any]) -> list[str]:
    users = {u["login"].lower() for u in data.get("users", []) if isinstance(u.get("login"), str)}
    repos = {r["name"].lower() for r in data.get("repos", []) if isinstance(r.get("name"), str)}
    refs = _Refs(users, repos, [])
    for name, token in (data.get("tokens") or {}).items():
        if not isinstance(token, dict):
            refs.problems.append(f"tokens.{name}: expected a mapping")
            continue
        problems: list[str] = []
        check_shape(token, TOKEN, f"tokens.{name}", problems)
        refs.problems.extend(problems)
        refs.user(token.get("user"), f"tokens.{name}.user")
    seen_repos: set[str] = set()
    for r_index, repo in enumerate(data.get("repos", [])):
        where = f"repos[{r_index}]"
        name = repo.get("name", "")
        if name.count("/") != 1:
            refs.problems.append(f"{where}.name: expected owner/name, got {name!r}")
            continue
        if name.lower() in seen_repos:
            refs.problems.append(f"{where}.name: repository {name!r} is listed twice")
        seen_repos.add(name.lower())
        refs.user(name.split("/")[0], f"{where}.name (owner)")
        if "fork_of" in repo:
            refs.repo(repo["fork_of"], f"{where}.fork_of")
        for login, level in (repo.get("collaborators") or {}).items():
            refs.user(login, f"{where}.collaborators.{login}")
            if level not in PERMISSIONS[1:]:
                refs.problems.append(
                    f"{where}.collaborators.{login}: {level!r} is not one of {PERMISSIONS[1:]}"
                )
        branch_names = {b.get("name") for b in repo.get("branches", [])} | {
            repo.get("default_branch", "main")
        }
        for b_index, branch in enumerate(repo.get("branches", [])):
            if "from" in branch and branch["from"] not in branch_names:
                refs.problems.append(
                    f"{where}.branches[{b_index}].from: unknown branch {branch['from']!r}"
                )
        numbers: set[int] = set()
        for kind in ("issues", "pulls", "discussions"):
            for i_index, item in enumerate(repo.get(kind, [])):
                here = f"{where}.{kind}[{i_index}]"
                number = item.get("number")
                if number is not None and kind != "discussions":
                    if number in numbers:
                        refs.problems.append(f"{here}.number: #{number} is used twice")
                    numbers.add(number)
                _check_content_refs(refs, item, here)
                if kind == "pulls":
                    head = item.get("head", "")
                    if ":" in head:
                        owner = head.split(":", 1)[0]
                        candidates = [r for r in repos if r.split("/")[0] == owner.lower()]
                        if not candidates:
                            refs.problems.append(
                                f"{here}.head: no repository of {owner!r} to hold {head!r}"
                            )
                for key in ("state",):
                    if key in item and item[key] not in ("open", "closed"):
                        refs.problems.append(f"{here}.state: must be open or closed")
    return refs.problems


def _check_content_refs(refs: _Refs, item: dict[str, Any], where: str) -> None:
    refs.user(item.get("author"), f"{where}.author")
    for index, login in enumerate(item.get("assignees", [])):
        refs.user(login, f"{where}.assignees[{index}]")
    _check_reactions(refs, item.get("reactions"), f"{where}.reactions")
    for c_index, comment in enumerate(item.get("comments", [])):
        here = f"{where}.comments[{c_index}]"
        refs.user(comment.get("author"), f"{here}.author")
        _check_reactions(refs, comment.get("reactions"), f"{here}.reactions")
        for r_index, reply in enumerate(comment.get("replies", [])):
            refs.user(reply.get("author"), f"{here}.replies[{r_index}].author")
        for r_index, review_comment in enumerate(comment.get("comments", [])):
            refs.user(review_comment.get("author"), f"{here}.comments[{r_index}].author")
    for r_index, review in enumerate(item.get("reviews", [])):
        refs.user(review.get("author"), f"{where}.reviews[{r_index}].author")
    for r_index, comment in enumerate(item.get("review_comments", [])):
        refs.user(comment.get("author"), f"{where}.review_comments[{r_index}].author")


def _check_reactions(refs: _Refs, reactions: Any, where: str) -> None:
    for content, logins in (reactions or {}).items():
        if content not in REACTIONS:
            refs.problems.append(f"{where}.{content}: not one of {REACTIONS}")
        for index, login in enumerate(logins or []):
            refs.user(login, f"{where}.{content}[{index}]")
