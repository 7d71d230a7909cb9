"""PyGithub against the local GitHub, one covered operation after another.

The ``local_github`` fixture fails a test when any request or response broke
GitHub's description, so each test here is also a conformance replay: it must
finish with zero violations. The last test replays the whole journal of a
session through the spec check again to prove it.
"""

from __future__ import annotations

import io
import zipfile
from typing import Any

import github
import pytest
import requests

from tusk.sandbox.spec import load_openapi


@pytest.fixture
def gh(local_github: Any, base_scenario: dict[str, Any]) -> Any:
    local_github.load(base_scenario)
    return local_github


def test_users_and_repositories(gh: Any) -> None:
    client = gh.pygithub("agent")
    me = client.get_user()
    assert me.login == "tusk-bot"
    assert client.get_user("alice").login == "alice"
    mine = [r.full_name for r in me.get_repos()]
    assert "tusk-bot/widgets" in mine
    assert "alice/tusk-control" in mine  # a collaborator sees it
    assert [r.full_name for r in client.get_user("alice").get_repos()] == [
        "alice/widgets"
    ]  # private hidden
    repo = client.get_repo("alice/widgets")
    assert repo.clone_url == f"{gh.url}/alice/widgets.git"
    assert repo.permissions.push is False
    fork = client.get_repo("tusk-bot/widgets")
    assert fork.fork and fork.parent.full_name == "alice/widgets"


def test_branches_protection_and_permission(gh: Any) -> None:
    repo = gh.pygithub("alice").get_repo("alice/widgets")
    names = {b.name for b in repo.get_branches()}
    assert names == {"main", "fix-typo"}
    main = repo.get_branch("main")
    assert len(main.commit.sha) == 40
    assert main.commit.commit.committer.date is not None
    assert main.get_protection().required_pull_request_reviews.required_approving_review_count == 1
    with pytest.raises(github.GithubException) as unprotected:
        repo.get_branch("fix-typo").get_protection()
    assert unprotected.value.status == 404
    assert repo.get_collaborator_permission("bob") == "write"
    assert repo.get_collaborator_permission("tusk-bot") == "read"


def test_issues_comments_and_state_reason(gh: Any) -> None:
    repo = gh.pygithub("alice").get_repo("alice/widgets")
    issue = repo.create_issue("Second", body="Body", labels=["bug"])
    assert [label.name for label in issue.labels] == ["bug"]
    comment = issue.create_comment("first")
    comment.edit("edited")
    assert [c.body for c in issue.get_comments()] == ["edited"]
    issue.edit(state="closed", state_reason="not_planned")
    again = repo.get_issue(issue.number)
    assert (again.state, again.state_reason) == ("closed", "not_planned")
    comment.delete()
    assert list(issue.get_comments()) == []
    assert {i.number for i in repo.get_issues(state="all")} >= {1, 2, issue.number}


def test_repo_wide_comments_since_and_sort(gh: Any) -> None:
    repo = gh.pygithub("alice").get_repo("alice/widgets")
    issue = repo.get_issue(1)
    newest = issue.create_comment("later")
    listed = list(repo.get_issues_comments(sort="created", direction="desc"))
    assert listed[0].id == newest.id
    since = list(repo.get_issues_comments(since=newest.created_at))
    assert [c.id for c in since] == [newest.id]


def test_pulls_files_diff_reviews_and_review_comments(gh: Any) -> None:
    repo = gh.pygithub("alice").get_repo("alice/widgets")
    pull = repo.get_pull(2)
    assert (pull.head.ref, pull.base.ref, pull.changed_files) == ("fix-typo", "main", 1)
    files = list(pull.get_files())
    assert files[0].filename == "README.md" and "+A small library." in files[0].patch
    assert [r.state for r in pull.get_reviews()] == ["APPROVED"]
    comments = list(pull.get_review_comments())
    assert comments[0].body == "nice"
    assert [c.id for c in repo.get_pulls_review_comments()] == [comments[0].id]
    diff = gh.gateway("alice").get_text(
        "/repos/alice/widgets/pulls/2", accept="application/vnd.github.diff"
    )
    assert diff.startswith("diff --git a/README.md b/README.md")
    comments[0].delete()
    assert list(pull.get_review_comments()) == []


def test_pull_from_a_fork_and_deleting_the_fork_closes_it(gh: Any) -> None:
    agent = gh.pygithub("agent")
    upstream = agent.get_repo("alice/widgets")
    pull = upstream.create_pull(title="From fork", body="x", head="tusk-bot:main", base="main")
    assert pull.head.repo.full_name == "tusk-bot/widgets"
    agent.get_repo("tusk-bot/widgets").delete()
    assert gh.pygithub("alice").get_repo("alice/widgets").get_pull(pull.number).state == "closed"


def test_fork_carries_the_upstream_branches_and_merges_upstream(gh: Any) -> None:
    bob = gh.pygithub("bob")
    fork = bob.get_repo("alice/widgets").create_fork()
    assert fork.full_name == "bob/widgets" and fork.fork
    assert {b.name for b in bob.get_repo("bob/widgets").get_branches()} == {"main", "fix-typo"}
    merged = bob.get_repo("bob/widgets").merge_upstream("main")
    assert merged.merge_type == "none"


def test_repository_dispatch_is_recorded_with_token_name(gh: Any) -> None:
    repo = gh.pygithub("alice").get_repo("alice/tusk-control")
    assert repo.create_repository_dispatch("tusk-shard", {"jobid": "j1", "shard_index": 0}) is True
    assert gh.dispatches() == [
        {
            "repo": "alice/tusk-control",
            "event_type": "tusk-shard",
            "client_payload": {"jobid": "j1", "shard_index": 0},
            "token": "alice",
            "at": gh.dispatches()[0]["at"],
        }
    ]


def test_notifications_list_thread_read_and_done(gh: Any) -> None:
    bot = gh.pygithub("bot-read").get_user()
    threads = list(bot.get_notifications())
    by_title = {t.subject.title: t for t in threads}
    assert by_title["Typo in README"].reason == "mention"
    # Since late 2024 a discussion's subject.url is filled in, with a URL that answers 404.
    assert by_title["Ideas"].subject.url.startswith(f"{gh.url}/repos/alice/widgets/discussions/")
    thread = by_title["Typo in README"]
    assert thread.subject.latest_comment_url.startswith(
        f"{gh.url}/repos/alice/widgets/issues/comments/"
    )
    thread.mark_as_read()
    assert gh.gateway("bot-read").get(f"/notifications/threads/{thread.id}")["unread"] is False
    assert "Typo in README" not in {t.subject.title for t in bot.get_notifications()}
    assert "Typo in README" in {t.subject.title for t in bot.get_notifications(all=True)}
    thread.mark_as_done()
    assert "Typo in README" not in {t.subject.title for t in bot.get_notifications(all=True)}


def test_search_issues_qualifiers(gh: Any) -> None:
    client = gh.pygithub("agent")
    found = client.search_issues("repo:alice/widgets commenter:alice is:issue")
    assert [i.number for i in found] == [1]
    assert [i.number for i in client.search_issues("repo:alice/widgets is:pr state:open")] == [2]
    assert [i.number for i in client.search_issues("repo:alice/widgets label:bug")] == [1]
    assert [i.number for i in client.search_issues("smal in:body repo:alice/widgets")] == [1]


def test_reactions_on_issue_comments(gh: Any) -> None:
    comment = next(iter(gh.pygithub("bob").get_repo("alice/widgets").get_issue(1).get_comments()))
    reaction = comment.create_reaction("+1")
    assert [r.content for r in comment.get_reactions()] == ["+1"]
    comment.delete_reaction(reaction.id)
    assert list(comment.get_reactions()) == []


def test_artifacts_upload_list_download_delete(gh: Any) -> None:
    upload = requests.post(
        f"{gh.url}/_sandbox/artifacts/alice/tusk-control",
        json={"name": "job-shard-0", "run_id": 7, "files": {"shard.json": '{"i": 0}'}},
        headers={"Authorization": "token agent"},
        timeout=10,
    )
    assert upload.status_code == 201
    repo = gh.pygithub("agent").get_repo("alice/tusk-control")
    artifacts = list(repo.get_artifacts(name="job-shard-0"))
    assert [a.name for a in artifacts] == ["job-shard-0"]
    assert repo.get_artifact(artifacts[0].id).workflow_run.id == 7
    with zipfile.ZipFile(io.BytesIO(_fetch(gh, artifacts[0]))) as archive:
        assert archive.read("shard.json") == b'{"i": 0}'
    artifacts[0].delete()
    assert list(repo.get_artifacts(name="job-shard-0")) == []


def _fetch(gh: Any, artifact: Any) -> bytes:
    redirect = requests.get(
        artifact.archive_download_url,
        headers={"Authorization": "token agent"},
        allow_redirects=False,
        timeout=10,
    )
    assert redirect.status_code == 302
    return requests.get(redirect.headers["Location"], timeout=10).content


def test_rate_limit_and_headers(gh: Any) -> None:
    client = gh.pygithub("agent")
    client.get_user().login  # noqa: B018 - one counted request
    limits = client.get_rate_limit()
    assert limits.resources.core.limit == 5000
    assert limits.resources.core.remaining < 5000


def test_journal_replays_through_the_spec_without_violations(gh: Any) -> None:
    client = gh.pygithub("agent")
    repo = client.get_repo("alice/widgets")
    repo.get_issue(1).create_comment("replayed")
    list(repo.get_pull(2).get_files())
    spec = load_openapi()
    replayed = 0
    for entry in gh.journal():
        op = spec.match(entry["method"], entry["path"])
        assert op is not None, entry
        query = {k: v if isinstance(v, list) else [v] for k, v in entry["query"].items()}
        assert spec.check_request(op, query, entry["body"], entry["body"] is not None) == []
        replayed += 1
    assert replayed >= 4


def test_contents_and_combined_status(gh: Any) -> None:
    repo = gh.pygithub("agent").get_repo("alice/widgets")
    assert repo.get_contents("README.md").decoded_content == b"# Widgets\n\nA smal library.\n"
    assert repo.get_contents("README.md", ref="fix-typo").decoded_content.endswith(
        b"small library.\n"
    )
    assert [c.path for c in repo.get_contents("")] == ["README.md"]
    status = gh.gateway("agent").get("/repos/alice/widgets/commits/main/status")
    assert (status["state"], status["total_count"]) == ("pending", 0)


def test_a_human_review_mentioning_the_bot_notifies_it(gh: Any) -> None:
    pull = gh.pygithub("alice").get_repo("alice/widgets").get_pull(2)
    pull.create_review(body="@tusk-bot can you rebase?", event="COMMENT")
    gh.gateway("alice").post(
        "/repos/alice/widgets/pulls/2/comments",
        {
            "body": "@tusk-bot and this line",
            "commit_id": pull.head.sha,
            "path": "README.md",
            "line": 3,
        },
    )
    threads = gh.gateway("bot-read").get("/notifications")
    thread = next(t for t in threads if t["subject"]["title"] == "Fix the typo")
    assert thread["reason"] == "mention"
    assert "/pulls/comments/" in thread["subject"]["latest_comment_url"]
    assert [r.state for r in pull.get_reviews()] == ["APPROVED", "COMMENTED"]


def test_check_runs_of_a_ref_are_listed_empty(gh: Any) -> None:
    runs = gh.gateway("agent").get("/repos/alice/widgets/commits/main/check-runs")
    assert runs == {"total_count": 0, "check_runs": []}
    with pytest.raises(Exception, match="No commit found"):
        gh.gateway("agent").get("/repos/alice/widgets/commits/nope/check-runs")


def test_reactions_on_pull_request_review_comments(gh: Any) -> None:
    # go-away reacts to a review comment that asked the bot to leave.
    pull = gh.pygithub("bob").get_repo("alice/widgets").get_pull(2)
    comment = next(iter(pull.get_review_comments()))
    reaction = comment.create_reaction("eyes")
    assert [r.content for r in comment.get_reactions()] == ["eyes"]
    assert pull.get_review_comment(comment.id).raw_data["reactions"]["eyes"] == 1
    comment.delete_reaction(reaction.id)
    assert list(comment.get_reactions()) == []
