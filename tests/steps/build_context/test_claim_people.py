"""A job's claim holds whatever people do to its log issue (relabel, close, edit, delete,
transfer): a re-delivery of the job opens no second log issue and runs nothing, and
its step summary says why it stopped."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from bc_samples import REPO, issue_document, settings

from tusk.contracts.config import Settings
from tusk.github.gateway import Gateway
from tusk.issues.state import StateStore
from tusk.steps.build_context import main as build_main
from tusk.text.markers import first_marker

CONTROL = "alice/tusk-control"
OTHER = "alice/archive"
TRIGGER_REACTIONS = f"/repos/{REPO}/issues/comments/9000/reactions"

SCENARIO: dict[str, Any] = {
    "now": "2026-11-30T11:30:00Z",
    "users": [{"login": "alice"}, {"login": "carol"}, {"login": "tusk-bot"}],
    "tokens": {
        "agent": {"user": "tusk-bot", "scopes": ["repo"]},
        "alice": {"user": "alice", "scopes": ["repo"]},  # owns the control repository
        "carol": {"user": "carol", "scopes": ["repo"]},  # a collaborator with write
    },
    "repos": [
        {
            "name": REPO,
            "collaborators": {"tusk-bot": "write"},
            "issues": [
                {
                    "number": 7,
                    "author": "alice",
                    "title": "Widget breaks",
                    "body": "x",
                    "comments": [
                        {"id": 9000, "author": "alice", "body": "@tusk-bot please fix it"}
                    ],
                }
            ],
        },
        {
            "name": CONTROL,
            "private": True,
            "collaborators": {"tusk-bot": "write", "carol": "write"},
            "labels": ["workflow", "bug"],
        },
        {"name": OTHER, "private": True, "collaborators": {"tusk-bot": "write"}},
    ],
}


@pytest.fixture
def github(local_github: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    local_github.load(SCENARIO)
    for name in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_ACTIONS"):
        monkeypatch.delenv(name, raising=False)
    return local_github


def deliver(
    github: Any, tmp_path: Path, name: str, configured: Settings | None = None
) -> dict[str, Any]:
    """One delivery of the job, through build-context; its outputs and step summary."""
    summary = tmp_path / f"{name}-summary.md"
    summary.write_text("", encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GITHUB_STEP_SUMMARY", str(summary))
        outputs = build_main.build_and_claim(
            issue_document([]),
            configured or settings(),
            github.gateway("agent"),
            context_file=tmp_path / "context.json",
            out_dir=tmp_path / name,
            artifact_name="a",
            run_url=None,
        )
    return {**outputs, "summary": summary.read_text(encoding="utf-8")}


def control_issues(github: Any) -> dict[int, dict[str, Any]]:
    return {int(n): i for n, i in github.state()["repos"][CONTROL]["issues"].items()}


def graphql(github: Any, token: str, query: str, **variables: Any) -> dict[str, Any]:
    data: dict[str, Any] = github.gateway(token).graphql(query, variables)
    return data


def node_of(github: Any, repo: str, number: int | None = None) -> str:
    gateway: Gateway = github.gateway("agent")
    if number is None:
        return str(gateway.get(f"/repos/{repo}")["node_id"])
    return str(gateway.get(f"/repos/{repo}/issues/{number}")["node_id"])


def delete(github: Any, number: int) -> None:
    graphql(
        github,
        "alice",
        "mutation($id: ID!) { deleteIssue(input: {issueId: $id}) { clientMutationId } }",
        id=node_of(github, CONTROL, number),
    )


def transfer(github: Any, number: int) -> None:
    graphql(
        github,
        "alice",
        "mutation($id: ID!, $to: ID!) { transferIssue(input: {issueId: $id, repositoryId: $to})"
        " { issue { number } } }",
        id=node_of(github, CONTROL, number),
        to=node_of(github, OTHER),
    )


def patch(github: Any, token: str, number: int, **fields: Any) -> None:
    github.gateway(token).patch(f"/repos/{CONTROL}/issues/{number}", json=fields)


def remove_label(github: Any, number: int) -> None:
    github.gateway("carol").delete(f"/repos/{CONTROL}/issues/{number}/labels/workflow")


def edit_marker_away(github: Any, number: int) -> None:
    patch(github, "carol", number, body="(cleaned up by carol)")


def run_ended(github: Any) -> None:
    """What run-claude's write-up leaves on the trigger: the bot's 🚀."""
    github.gateway("agent").post(TRIGGER_REACTIONS, json={"content": "rocket"})


def everything(github: Any, number: int) -> None:
    patch(github, "carol", number, state="closed", state_reason="duplicate")
    remove_label(github, number)
    edit_marker_away(github, number)


PEOPLE: dict[str, Callable[[Any, int], None]] = {
    "label removed": remove_label,
    "closed as duplicate": lambda gh, n: patch(
        gh, "carol", n, state="closed", state_reason="duplicate"
    ),
    "closed as completed": lambda gh, n: patch(gh, "carol", n, state="closed"),
    "closed as not planned": lambda gh, n: patch(
        gh, "carol", n, state="closed", state_reason="not_planned"
    ),
    "marker edited away": edit_marker_away,
    "closed as duplicate, label removed, marker edited away": everything,
}


@pytest.mark.parametrize("touch", PEOPLE.values(), ids=PEOPLE.keys())
def test_a_running_jobs_claim_holds_whatever_a_person_does_to_its_log_issue(
    github: Any, tmp_path: Path, touch: Callable[[Any, int], None]
) -> None:
    first = deliver(github, tmp_path, "first")
    assert first["proceed"] is True
    number = int(first["log-issue-number"])
    touch(github, number)
    again = deliver(github, tmp_path, "again")
    assert again["proceed"] is False
    assert again["log-issue-number"] == number
    assert list(control_issues(github)) == [number]  # no second log issue
    assert not (tmp_path / "again" / "run.json").exists()  # nothing for run-claude
    assert f"another run already owns this job: [#{number}]" in again["summary"]


@pytest.mark.parametrize("gone", [delete, transfer], ids=["deleted", "transferred"])
def test_a_claim_that_cannot_be_found_is_stood_in_for_by_the_bots_reaction_on_the_trigger(
    github: Any, tmp_path: Path, gone: Callable[[Any, int], None]
) -> None:
    first = deliver(github, tmp_path, "first")
    run_ended(github)
    gone(github, int(first["log-issue-number"]))
    again = deliver(github, tmp_path, "again")
    assert again["proceed"] is False
    assert control_issues(github) == {}  # nothing new was created
    assert not (tmp_path / "again" / "run.json").exists()
    assert "this run stops here: the bot's 🚀 on the trigger" in again["summary"]
    assert "says this job ran already, but its log issue cannot be found" in again["summary"]


def rerun_refusals(github: Any) -> list[str]:
    comments = github.gateway("alice").paginate(f"/repos/{REPO}/issues/7/comments")
    return [c["body"] for c in comments if first_marker(c["body"], "rerun")]


def test_a_claim_deleted_while_its_job_runs_is_stood_in_for_by_its_status_on_the_thread(
    github: Any, tmp_path: Path
) -> None:
    """No 🚀 yet and no history entry: the status comment build-context posts right after
    its claim says the job was claimed, and its log issue answers 410. Every re-delivery
    stops, and the thread hears it once."""
    first = deliver(github, tmp_path, "first")
    assert first["proceed"] is True
    delete(github, int(first["log-issue-number"]))
    for name in ("again", "and-again"):
        again = deliver(github, tmp_path, name)
        assert again["proceed"] is False
        assert not (tmp_path / name / "run.json").exists()
        assert "says this job was claimed; its log issue" in again["summary"]
        assert "answers 410 Gone (deleted)" in again["summary"]
    assert control_issues(github) == {}  # nothing new was created
    [refusal] = rerun_refusals(github)
    assert "Not run again." in refusal and "answers 410 Gone" in refusal
    assert "@tusk-bot" not in refusal.split("\n", 1)[1]  # the bot is not mentioned


def test_a_claim_deleted_after_its_run_is_stood_in_for_by_the_history(
    github: Any, tmp_path: Path
) -> None:
    """With no status comment on the thread and no reaction, the history issue's entry of
    the run (carrying its job id) says it ran."""
    quiet = settings().model_copy(
        update={"feedback": settings().feedback.model_copy(update={"thread_status": False})}
    )
    first = deliver(github, tmp_path, "first", quiet)
    StateStore(github.gateway("agent"), quiet).append_entry(
        "history", "fixed the widget", jobid=str(first["jobid"])
    )
    delete(github, int(first["log-issue-number"]))
    again = deliver(github, tmp_path, "again", quiet)
    assert again["proceed"] is False
    assert "the history issue has this job's entry" in again["summary"]
    assert len(rerun_refusals(github)) == 1


def test_a_claim_transferred_while_its_job_runs_is_followed_to_its_new_home(
    github: Any, tmp_path: Path
) -> None:
    """No 🚀 yet: the re-delivery's own claim finds the old number answering 301, follows
    it, finds the bot's claim there and gives way."""
    first = deliver(github, tmp_path, "first")
    number = int(first["log-issue-number"])
    transfer(github, number)
    again = deliver(github, tmp_path, "again")
    assert again["proceed"] is False
    assert again["log-issue-url"].endswith(f"/{OTHER}/issues/1")
    (mine,) = control_issues(github).values()  # the re-delivery's own, released
    assert (mine["state"], mine["state_reason"]) == ("closed", "duplicate")


def test_a_reaction_by_someone_else_does_not_stop_the_job(github: Any, tmp_path: Path) -> None:
    github.gateway("carol").post(TRIGGER_REACTIONS, json={"content": "rocket"})
    assert deliver(github, tmp_path, "first")["proceed"] is True


def test_a_claim_the_bot_released_itself_does_not_hold_the_job(github: Any, tmp_path: Path) -> None:
    """The bot closing its own claim as duplicate (a losing or released claim) is the one
    way a claim stops holding its job. GitHub's listings carry no ``closed_by``: only the
    claim's own URL says who closed it, so a claim that trusted the listing fails here."""
    first = deliver(github, tmp_path, "first")
    patch(github, "agent", int(first["log-issue-number"]), state="closed", state_reason="duplicate")
    assert deliver(github, tmp_path, "again")["proceed"] is True


def test_two_builds_racing_under_a_reordering_listing_lag_give_exactly_one_run(
    local_github: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both deliveries look (and find nothing), then both create: the issue created
    first stays out of listings longer than the second. Exactly one proceeds."""
    local_github.load({**SCENARIO, "settings": {"listing_lags_seconds": [45.0, 0.0]}})
    for name in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_ACTIONS"):
        monkeypatch.delenv(name, raising=False)
    barrier = threading.Barrier(2)
    results: dict[str, dict[str, Any]] = {}
    errors: list[BaseException] = []

    class Synchronised(Gateway):
        waited = False

        def post(self, path: str, json: Any = None, **kwargs: Any) -> Any:
            if not self.waited and path.endswith("/issues"):
                self.waited = True
                barrier.wait(timeout=30)  # both have looked, neither has created
            return super().post(path, json, **kwargs)

    def build(name: str) -> None:
        try:
            gateway = Synchronised(
                api_url=local_github.url,
                token=local_github.gateway("agent")._token,
                token_name="agent",
                sleep=local_github.sleep,
            )
            results[name] = build_main.build_and_claim(
                issue_document([]),
                settings(),
                gateway,
                context_file=tmp_path / "context.json",
                out_dir=tmp_path / name,
                artifact_name="a",
                run_url=None,
            )
        except BaseException as error:  # re-raised below, in the test's thread
            errors.append(error)

    threads = [threading.Thread(target=build, args=(n,)) for n in ("one", "two")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    assert sorted(r["proceed"] for r in results.values()) == [False, True]
    assert [(tmp_path / n / "run.json").exists() for n in ("one", "two")].count(True) == 1
    states = {n: (i["state"], i["state_reason"]) for n, i in control_issues(local_github).items()}
    assert states == {1: ("open", None), 2: ("closed", "duplicate")}
    assert {r["log-issue-number"] for r in results.values()} == {1}


def test_a_claim_is_found_through_githubs_repository_links(
    local_github: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages of two: the bot's issues in the control repository span pages, read where
    GitHub's Link points (/repositories/{id}/...); the re-delivery still finds the claim."""
    for name in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_ACTIONS"):
        monkeypatch.delenv(name, raising=False)
    world = {**SCENARIO, "settings": {"page_size": 2}}
    world["repos"] = [
        {**r, "issues": [{"author": "tusk-bot", "title": f"notes {n}"} for n in range(1, 5)]}
        if r["name"] == CONTROL
        else r
        for r in SCENARIO["repos"]
    ]
    local_github.load(world)
    first = deliver(local_github, tmp_path, "first")
    assert first["proceed"] is True
    again = deliver(local_github, tmp_path, "again")
    assert (again["proceed"], again["log-issue-number"]) == (False, first["log-issue-number"])
    by_id = [e for e in local_github.journal() if e["path"].startswith("/repositories/")]
    assert {e.get("route") for e in by_id} >= {f"/repos/{CONTROL}/issues"}
    assert local_github.take_violations() == []
