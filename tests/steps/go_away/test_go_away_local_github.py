"""go-away against the local GitHub: scope rules, the blocklist, cleanup and its report."""

from __future__ import annotations

import base64
import threading
from typing import Any

import pytest
from go_away_world import BOT, CONTROL, open_fork_pull, request, scenario, settings

from tusk.contracts.models import Blocklist, GoAwayRequest
from tusk.errors import UserError
from tusk.issues.state import StateStore
from tusk.issues.state_codec import StateError
from tusk.steps.go_away import main
from tusk.steps.go_away.cleanup import GoAwayRun


def run_go_away(
    local_github: Any,
    go_away_request: GoAwayRequest,
    *,
    token: str = "agent",
    reaction: str | None = "+1",
    pauses: list[float] | None = None,
) -> int:
    return main.execute(
        go_away_request,
        gateway=local_github.gateway(token),
        settings=settings(),
        reaction=reaction,
        sleep=(pauses if pauses is not None else []).append,
    )


def repo_state(local_github: Any, name: str) -> dict[str, Any] | None:
    return local_github.state()["repos"].get(name)


def comment_ids(local_github: Any, name: str) -> set[int]:
    repo = repo_state(local_github, name)
    assert repo is not None
    return {c["id"] for issue in repo["issues"].values() for c in issue["comments"]}


def discussion_comments(local_github: Any, name: str) -> dict[int, str]:
    repo = repo_state(local_github, name)
    assert repo is not None
    return {
        item["id"]: item["body"]
        for discussion in repo["discussions"].values()
        for comment in discussion["comments"]
        for item in (comment, *comment["replies"])
    }


def review_comment_ids(local_github: Any, name: str) -> set[int]:
    repo = repo_state(local_github, name)
    assert repo is not None
    pulls = [i["pull"] for i in repo["issues"].values() if i["pull"]]
    return {c["id"] for pull in pulls for c in pull["review_comments"]}


def control_issues(local_github: Any) -> dict[int, dict[str, Any]]:
    repo = repo_state(local_github, CONTROL)
    assert repo is not None
    return {int(n): issue for n, issue in repo["issues"].items()}


def go_away_log(local_github: Any) -> dict[str, Any]:
    (log,) = [i for i in control_issues(local_github).values() if "go away" in i["title"]]
    return log


def blocklist(local_github: Any) -> Any:
    return StateStore(local_github.gateway("bot-read"), settings()).read_blocklist()


@pytest.fixture
def world(local_github: Any) -> Any:
    local_github.load(scenario(everyone_asks=True))
    return local_github


def test_collaborator_blocks_the_repository_and_the_bot_leaves_it(world: Any) -> None:
    fork_pull = open_fork_pull(world.gateway("agent"))
    pauses: list[float] = []

    assert run_go_away(world, request("bob"), pauses=pauses) == 0

    blocked = blocklist(world)
    assert [e.repo for e in blocked.repos] == ["alice/widgets"]
    assert [e.user for e in blocked.users] == ["bob"]
    # The URL GitHub gives for the verified comment, not the one the payload claimed.
    assert blocked.repos[0].source_url.endswith("/alice/widgets/issues/1#issuecomment-503")
    # The fork is gone and its pull request closed with it.
    assert repo_state(world, f"{BOT}/widgets") is None
    pull = repo_state(world, "alice/widgets")["issues"][str(fork_pull["number"])]
    assert pull["state"] == "closed"
    # Only the bot's comments went, conversation and review comments alike.
    assert comment_ids(world, "alice/widgets") == {501, 503, 504}
    assert review_comment_ids(world, "alice/widgets") == {802}
    # The submitted review cannot be deleted: it stays, and is listed.
    reviews = repo_state(world, "alice/widgets")["issues"]["2"]["pull"]["reviews"]
    assert {r["id"] for r in reviews} == {701, 702}
    # bob owns bob/tools: the bot leaves it too (fork and comment).
    assert comment_ids(world, "bob/tools") == {902}
    assert repo_state(world, f"{BOT}/tools") is None
    # Repositories nobody sent it away from keep everything.
    assert comment_ids(world, "alice/other") == {951}
    assert comment_ids(world, "carol/notes") == {961}
    # The bot's discussion comments went too: its reply and its lone comment are deleted;
    # its comment that alice answered is wiped (GitHub keeps the thread), alice's stay.
    assert discussion_comments(world, "alice/widgets") == {
        1101: "",
        1102: "Please",
        1103: "Also this",
    }
    assert discussion_comments(world, "alice/other") == {1201: "Stays."}
    # A pause between each two of the 10 deletes: 2 forks, 4 comments, 1 review comment,
    # 3 discussion comments.
    assert pauses == [1.0] * 9

    issues = control_issues(world)
    assert (issues[1]["state"], issues[1]["state_reason"]) == ("closed", "not_planned")
    assert (issues[3]["state"], issues[3]["state_reason"]) == ("closed", "not_planned")
    assert issues[2]["state"] == "open"  # carol/notes was not affected

    log = go_away_log(world)
    assert (log["state"], log["state_reason"], log["labels"]) == (
        "closed",
        "not_planned",
        ["workflow"],
    )
    body = log["body"]
    assert (
        "- The repository `alice/widgets`: `bob` has the `write` role there "
        "(collaborator permission)." in body
    )
    assert "- Every repository owned by `bob`." in body
    fork_row = "`tusk-bot/widgets` deleted, closing 1 open pull request(s) | 3 | 1 | 3 | 0 |"
    assert f"| `alice/widgets` | {fork_row}" in body
    assert "| `bob/tools` | `tusk-bot/tools` deleted | 1 | 0 | 0 | 0 |" in body
    assert "pullrequestreview-701" in body
    assert "## Problems\n\nNone." in body
    assert "@bob" not in body and "@alice" not in body  # notifies nobody

    reactions = repo_state(world, "alice/widgets")["issues"]["1"]["comments"]
    (go_away_comment,) = [c for c in reactions if c["id"] == 503]
    assert [(r["user"], r["content"]) for r in go_away_comment["reactions"]] == [(BOT, "+1")]


def test_collaborator_permission_is_asked_of_the_permission_endpoint(world: Any) -> None:
    run_go_away(world, request("bob"))
    paths = [e["path"] for e in world.journal()]
    assert "/repos/alice/widgets/collaborators/bob/permission" in paths


def test_non_collaborator_blocks_only_their_own_repositories(world: Any) -> None:
    assert run_go_away(world, request("carol", "504")) == 0

    blocked = blocklist(world)
    assert blocked.repos == ()
    assert [e.user for e in blocked.users] == ["carol"]
    assert comment_ids(world, "alice/widgets") == {501, 502, 503, 504, 505, 601}
    assert repo_state(world, f"{BOT}/widgets") is not None
    assert comment_ids(world, "carol/notes") == set()
    issues = control_issues(world)
    assert issues[1]["state"] == "open"
    assert issues[2]["state_reason"] == "not_planned"
    assert (
        "Not `alice/widgets` itself: `carol` has the `read` role there (collaborator permission)"
        in go_away_log(world)["body"]
    )


def test_owner_blocks_the_repository_and_everything_they_own(world: Any) -> None:
    assert run_go_away(world, request("alice", "501")) == 0

    blocked = blocklist(world)
    assert [e.repo for e in blocked.repos] == ["alice/widgets"]
    assert [e.user for e in blocked.users] == ["alice"]
    assert comment_ids(world, "alice/other") == set()
    assert comment_ids(world, "alice/widgets") == {501, 503, 504}
    assert comment_ids(world, "bob/tools") == {901, 902}


def test_repeating_a_go_away_changes_nothing_more(world: Any) -> None:
    assert run_go_away(world, request("bob")) == 0
    before = blocklist(world)
    journal_before = len(world.journal())

    again = request("bob", jobid="alice-widgets-ic-bob-again")
    assert run_go_away(world, again) == 0

    assert blocklist(world) == before
    deletes = [e for e in world.journal()[journal_before:] if e["method"] == "DELETE"]
    assert deletes == []
    second = [
        i
        for i in control_issues(world).values()
        if "go away" in i["title"] and "alice-widgets-ic-bob-again" in i["body"]
    ]
    assert "The blocklist already held these entries; nothing changed." in second[0]["body"]


def test_redelivered_job_is_handled_once(world: Any) -> None:
    assert run_go_away(world, request("bob")) == 0
    journal_before = len(world.journal())

    assert run_go_away(world, request("bob")) == 0

    later = world.journal()[journal_before:]
    assert [e for e in later if e["method"] != "GET"] == []
    assert len([i for i in control_issues(world).values() if "go away" in i["title"]]) == 1


def test_two_concurrent_go_aways_lose_neither_update(world: Any) -> None:
    # bob and alice both send the bot away from alice/widgets at once: their
    # blocklist updates race, and so do their deletes there.
    open_fork_pull(world.gateway("agent"))
    results: dict[str, int] = {}

    def go(actor: str, comment_id: str) -> None:
        results[actor] = run_go_away(world, request(actor, comment_id))

    threads = [
        threading.Thread(target=go, args=("bob", "503")),
        threading.Thread(target=go, args=("alice", "501")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert results == {"bob": 0, "alice": 0}  # deleted by the other is not a failure
    blocked = blocklist(world)
    assert [e.repo for e in blocked.repos] == ["alice/widgets"]
    assert sorted(e.user for e in blocked.users) == ["alice", "bob"]
    assert comment_ids(world, "alice/widgets") == {501, 503, 504}
    assert comment_ids(world, "alice/other") == set()
    assert comment_ids(world, "bob/tools") == {902}
    assert repo_state(world, f"{BOT}/widgets") is None


def test_token_without_delete_repo_still_blocks_and_reports_what_to_do(world: Any) -> None:
    assert run_go_away(world, request("bob"), token="agent-no-delete") == 1

    blocked = blocklist(world)
    assert [e.repo for e in blocked.repos] == ["alice/widgets"]
    assert repo_state(world, f"{BOT}/widgets") is not None
    assert comment_ids(world, "alice/widgets") == {501, 503, 504}  # the rest went on
    body = go_away_log(world)["body"]
    assert "**could not delete the bot's fork tusk-bot/widgets** (`alice/widgets`)" in body
    assert "Give the agent token the `delete_repo` scope" in body
    assert "`tusk-bot/widgets` **not deleted**" in body
    assert go_away_log(world)["state_reason"] == "not_planned"


def test_without_push_access_the_comments_author_association_decides_and_says_so(
    local_github: Any,
) -> None:
    # Without push access GitHub refuses to tell anyone's permission (403); bob's go-away
    # comment shows him as a COLLABORATOR, so the repository is blocked all the same.
    world = scenario(everyone_asks=True)
    widgets = next(r for r in world["repos"] if r["name"] == "alice/widgets")
    del widgets["collaborators"][BOT]
    local_github.load(world)

    assert run_go_away(local_github, request("bob")) == 0

    blocked = blocklist(local_github)
    assert [e.repo for e in blocked.repos] == ["alice/widgets"]
    assert [e.user for e in blocked.users] == ["bob"]
    body = go_away_log(local_github)["body"]
    assert (
        "`bob` is `COLLABORATOR` there by their comment's author association, so counts as "
        "collaborator, by association (COLLABORATOR): role not visible"
    ) in body
    assert "## Problems\n\nNone." in body
    refused = [e for e in local_github.journal() if "/collaborators/" in e["path"]]
    assert [e["status"] for e in refused] == [403]


def test_a_stranger_without_push_access_blocks_only_what_they_own(local_github: Any) -> None:
    world = scenario(everyone_asks=True)
    widgets = next(r for r in world["repos"] if r["name"] == "alice/widgets")
    widgets["collaborators"] = {}
    local_github.load(world)

    assert run_go_away(local_github, request("carol", "504")) == 0

    assert blocklist(local_github).repos == ()
    body = go_away_log(local_github)["body"]
    assert "Not `alice/widgets` itself: `carol` is `NONE` there" in body


def test_a_permission_endpoint_failure_falls_back_on_the_association_and_is_reported(
    local_github: Any,
) -> None:
    local_github.load(scenario())
    local_github.add_fault("GET", r"/collaborators/bob/permission$", status=502, count=None)

    assert run_go_away(local_github, request("bob")) == 1

    assert [e.repo for e in blocklist(local_github).repos] == ["alice/widgets"]
    body = go_away_log(local_github)["body"]
    assert "**could not check whether `bob` may write to alice/widgets**" in body
    assert "author_association (`COLLABORATOR`) decided instead" in body


def test_reaction_can_be_turned_off(world: Any) -> None:
    assert run_go_away(world, request("bob"), reaction=None) == 0
    comments = repo_state(world, "alice/widgets")["issues"]["1"]["comments"]
    assert all(not c["reactions"] for c in comments)
    assert "No reaction on the request: reactions are turned off." in go_away_log(world)["body"]


def test_blocklist_failure_is_reported_and_the_cleanup_still_runs(world: Any) -> None:

    def broken_update(change: Any, *, note: str = "") -> Any:
        raise StateError("The blocklist issue could not be written", "Check the token.")

    report = GoAwayRun(
        request("bob"),
        gateway=world.gateway("agent"),
        settings=settings(),
        update_blocklist=broken_update,
        sleep=lambda seconds: None,
        reaction=None,
    ).run()

    assert not report.blocklist_updated
    assert [f.what for f in report.failures] == ["could not update the blocklist"]
    assert "by hand" in report.failures[0].todo
    assert comment_ids(world, "alice/widgets") == {501, 503, 504}


# --------------------------------------------------------------------------- forged requests


@pytest.mark.parametrize(
    ("go_away_request", "why"),
    [
        # carol claims bob's go-away: she would block alice/widgets' bob and clean up.
        (request("carol", "503"), "written by `bob`, not `carol`"),
        # alice's comment asks for work, not for the bot to leave.
        (request("alice", "501"), "does not say `@tusk-bot go away`"),
        # a comment that exists elsewhere (bob/tools) is not one in alice/widgets.
        (request("bob", "902"), "GitHub has no such issue_comment in alice/widgets"),
        # an id that is not an id must never become part of a REST path.
        (request("bob", "503/../../../../user", jobid="forged-path"), "is not a REST id"),
    ],
)
def test_forged_dispatch_blocks_and_deletes_nothing(
    local_github: Any, go_away_request: GoAwayRequest, why: str
) -> None:
    local_github.load(scenario())  # alice's and carol's comments are no go-aways here
    journal_before = len(local_github.journal())

    with pytest.raises(UserError) as raised:
        run_go_away(local_github, go_away_request)

    assert why in raised.value.title
    assert "Nothing was blocked or deleted" in raised.value.hint
    writes = [e for e in local_github.journal()[journal_before:] if e["method"] != "GET"]
    assert writes == []
    assert blocklist(local_github) == Blocklist()


def test_payload_url_is_replaced_by_the_verified_comment_url(world: Any) -> None:
    # The log title, reaction and blocklist entry must not point wherever the payload says.
    forged = request("bob", comment_url="https://github.com/elsewhere/repo/issues/9#x")
    assert run_go_away(world, forged) == 0
    assert blocklist(world).users[0].source_url.endswith("/alice/widgets/issues/1#issuecomment-503")
    assert "alice/widgets #1 go away" in go_away_log(world)["title"]


def discussion_world(body: str) -> dict[str, Any]:
    world = scenario()
    widgets = next(r for r in world["repos"] if r["name"] == "alice/widgets")
    widgets["discussions"] = [
        {
            "number": 7,
            "id": 70,
            "author": "alice",
            "title": "Ideas",
            "body": "Let's talk",
            "comments": [
                {
                    "id": 71,
                    "author": "carol",
                    "body": "Hm",
                    "replies": [{"id": 72, "author": "bob", "body": body}],
                }
            ],
        }
    ]
    return world


def discussion_request(actor: str = "bob") -> GoAwayRequest:
    reply_id = base64.b64encode(b"DiscussionComment:72").decode().rstrip("=")
    return request(
        actor,
        reply_id,
        jobid="alice-widgets-dc-72",
        comment_type="discussion_comment",
        comment_url="https://github.com/alice/widgets/discussions/7#discussioncomment-72",
    )


def test_discussion_reply_go_away_is_verified_over_graphql(local_github: Any) -> None:
    local_github.load(discussion_world(f"@{BOT} go away"))
    assert run_go_away(local_github, discussion_request()) == 0
    assert [e.repo for e in blocklist(local_github).repos] == ["alice/widgets"]


def test_discussion_reply_by_someone_else_is_refused(local_github: Any) -> None:
    local_github.load(discussion_world(f"@{BOT} go away"))
    with pytest.raises(UserError, match="written by `bob`, not `carol`"):
        run_go_away(local_github, discussion_request("carol"))
    assert blocklist(local_github) == Blocklist()


def test_private_repositories_of_the_actor_are_cleaned_too(local_github: Any) -> None:
    # GET /users/{u}/repos lists public repositories only; the bot's traces in a
    # private one it was invited to, and its private fork of it, must go as well.
    world = scenario()
    world["repos"] += [
        {
            "name": "bob/secret",
            "private": True,
            "collaborators": {BOT: "write"},
            "issues": [
                {
                    "number": 1,
                    "author": "bob",
                    "title": "Private",
                    "comments": [{"id": 991, "author": BOT, "body": "Private note."}],
                }
            ],
        },
        {"name": f"{BOT}/secret", "fork_of": "bob/secret", "private": True},
    ]
    local_github.load(world)

    assert run_go_away(local_github, request("bob")) == 0

    assert comment_ids(local_github, "bob/secret") == set()
    assert repo_state(local_github, f"{BOT}/secret") is None


def test_every_page_of_comments_is_cleaned_and_nobody_elses(local_github: Any) -> None:
    # 240 comments over three pages of 100: the bot's on the last page go too.
    world = scenario()
    tools = next(r for r in world["repos"] if r["name"] == "bob/tools")
    tools["issues"][0]["comments"] = [
        {"id": 2000 + i, "author": BOT if i % 3 == 0 else "bob", "body": f"c{i}"}
        for i in range(240)
    ]
    local_github.load(world)

    assert run_go_away(local_github, request("bob")) == 0

    left = comment_ids(local_github, "bob/tools")
    assert left == {2000 + i for i in range(240) if i % 3 != 0}


def bob_says_go_away_everywhere() -> dict[str, Any]:
    world = scenario()
    widgets = next(r for r in world["repos"] if r["name"] == "alice/widgets")
    pull = widgets["pulls"][0]
    go = f"@{BOT} go away"
    pull["reviews"][1]["body"] = go
    pull["review_comments"][0]["body"] = go
    widgets["issues"].append({"number": 3, "author": "bob", "title": "Leave", "body": go})
    return world


@pytest.mark.parametrize(
    ("comment_type", "comment_id", "url"),
    [
        ("review", "702", "https://github.com/alice/widgets/pull/2#pullrequestreview-702"),
        ("review_comment", "802", "https://github.com/alice/widgets/pull/2#discussion_r802"),
        ("issue_body", "3", "https://github.com/alice/widgets/issues/3"),
    ],
)
def test_every_rest_kind_of_go_away_is_verified(
    local_github: Any, comment_type: str, comment_id: str, url: str
) -> None:
    local_github.load(bob_says_go_away_everywhere())
    verified = request(
        "bob", comment_id, jobid=f"verify-{comment_id}", comment_type=comment_type, comment_url=url
    )
    assert run_go_away(local_github, verified) == 0
    assert [e.repo for e in blocklist(local_github).repos] == ["alice/widgets"]
    with pytest.raises(UserError, match="not `carol`"):
        run_go_away(local_github, verified.model_copy(update={"actor": "carol"}))


def test_a_large_cleanup_stays_under_githubs_content_limits(local_github: Any) -> None:
    """150 bot comments to delete: the stand-in's secondary limits (on by default: 80
    content requests a minute, 500 an hour) never refuse one of go-away's writes."""
    world = scenario()
    widgets = next(r for r in world["repos"] if r["name"] == "alice/widgets")
    widgets["issues"][0]["comments"] += [
        {"id": 3000 + n, "author": BOT, "body": f"note {n}"} for n in range(150)
    ]
    local_github.load(world)

    assert run_go_away(local_github, request("bob")) == 0

    assert comment_ids(local_github, "alice/widgets") == {501, 503, 504}
    refused = [e for e in local_github.journal() if e["status"] in (403, 429)]
    assert refused == []
    assert sum(local_github.sleeps) >= 150  # paced: a write every 1.2 s past a burst of 20


def test_a_cleanup_survives_github_refusing_content_for_a_while(local_github: Any) -> None:
    """Other runs of the bot write too, so the limit can bite whatever go-away paces:
    with a stand-in that allows only 5 content requests a minute, every 403 is waited
    out as its retry-after says, and nothing is left behind or done twice."""
    world = scenario()
    world["settings"] = {"secondary_limits": {"content_per_minute": 5}}
    widgets = next(r for r in world["repos"] if r["name"] == "alice/widgets")
    widgets["issues"][0]["comments"] += [
        {"id": 3000 + n, "author": BOT, "body": f"note {n}"} for n in range(20)
    ]
    local_github.load(world)

    assert run_go_away(local_github, request("bob")) == 0

    assert comment_ids(local_github, "alice/widgets") == {501, 503, 504}
    refused = [e for e in local_github.journal() if e["status"] == 403]
    assert refused  # the limit did bite, and was survived
    assert go_away_log(local_github)["state_reason"] == "not_planned"
    assert "## Problems\n\nNone." in go_away_log(local_github)["body"]


def test_the_clean_up_pages_through_githubs_repository_links(local_github: Any) -> None:
    """Pages of two: the bot's comments, forks and state issues are read page after page
    where GitHub's Link points, /repositories/{id}/..., and nothing is missed."""
    local_github.load({**scenario(everyone_asks=True), "settings": {"page_size": 2}})
    test_collaborator_blocks_the_repository_and_the_bot_leaves_it(local_github)
    by_id = [e for e in local_github.journal() if e["path"].startswith("/repositories/")]
    assert {e["token"] for e in by_id} >= {"agent"}
    assert local_github.take_violations() == []
