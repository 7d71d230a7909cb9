"""Undo one run against the local GitHub: exactly that run's writes go, nothing of another
run or person, only for its requester or a collaborator, once, recorded on its log issue
and in its audit chain; the bot stays allowed."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tusk.audit.chain import AuditLog
from tusk.audit.on_issue import audit_comments, verify_comments
from tusk.contracts.config import Settings
from tusk.contracts.models import UndoRequest
from tusk.errors import UserError
from tusk.github.thread_status import Status, ThreadStatus
from tusk.issues.state import StateStore
from tusk.steps.undo.main import execute
from tusk.text.markers import backlink_footer, first_marker, render_marker

BOT = "tusk-bot"
REPO = "alice/widgets"
CONTROL = "ops/control"
SETTINGS = Settings(bot=BOT, control_repo=CONTROL, allowed_users=("alice", "bob"))
AT = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def world() -> dict[str, Any]:
    return {
        "users": [{"login": login} for login in (BOT, "alice", "bob", "carol", "mallory", "ops")],
        "tokens": {
            "agent": {"user": BOT, "scopes": ["repo", "delete_repo"]},
            **{
                name: {"user": name, "scopes": ["repo"]}
                for name in ("alice", "bob", "carol", "mallory")
            },
        },
        "repos": [
            {"name": CONTROL, "collaborators": {BOT: "write"}, "labels": ["workflow"]},
            {
                "name": REPO,
                "collaborators": {"bob": "write", BOT: "write"},
                "branches": [{"name": "main"}],
                "files": {"README.md": "# Widgest\n"},
                "issues": [{"number": 1, "author": "alice", "title": "Typo", "body": "Widgest"}],
            },
            {
                "name": f"{BOT}/widgets",
                "fork_of": REPO,
                # bob may push to the agent's branches (as "allow edits by maintainers" lets)
                "collaborators": {"bob": "write"},
                "branches": [{"name": "main"}, {"name": "tusk/fix-a"}, {"name": "tusk/fix-b"}],
            },
        ],
    }


class Run:
    """One agent run as Tusk leaves it: a log issue naming its requester, its writes with
    the run's footer, and its audit chain posted on the log issue."""

    def __init__(self, gh: Any, tmp: Path, jobid: str, requester: str) -> None:
        self.gh, self.jobid, self.requester = gh, jobid, requester
        self.bot = gh.gateway("agent")
        marker = render_marker("job", {"jobid": jobid, "repo": REPO, "requester": requester})
        self.log = self.bot.post(
            f"/repos/{CONTROL}/issues",
            json={
                "title": f"[Agent Log] {REPO} #1",
                "body": f"{marker}\n# Task",
                "labels": ["workflow"],
            },
        ).body
        self.audit = AuditLog(tmp / f"{jobid}.jsonl", clock=lambda: AT)

    def footer(self) -> str:
        return backlink_footer(
            log_issue_url=self.log["html_url"], bot=BOT, go_away_phrase="go away", jobid=self.jobid
        )

    def _record(self, tool: str, url: str, created: str, **push: str) -> None:
        self.audit.append(
            tool=tool,
            kind="write",
            target=REPO,
            args={},
            decision="allowed",
            url=url,
            created=created,
            **push,
        )

    def push(self, branch: str, *, pushed: str = "created") -> str:
        """The run's push_branch as the MCP server records it: created or moved, and the
        head it left (what the fork has now)."""
        head = str(head_of(self.gh, branch))
        url = f"{self.gh.url}/{BOT}/widgets/tree/{branch}"
        self._record("push_branch", url, "branch", branch=pushed, head=head)
        return head

    def comment(self, number: int, text: str) -> dict[str, Any]:
        made = self.bot.post(
            f"/repos/{REPO}/issues/{number}/comments", json={"body": text + self.footer()}
        ).body
        self._record("create_comment", made["html_url"], "comment")
        return dict(made)

    def issue(self, title: str) -> dict[str, Any]:
        made = self.bot.post(
            f"/repos/{REPO}/issues", json={"title": title, "body": "x" + self.footer()}
        ).body
        self._record("create_issue", made["html_url"], "issue")
        return dict(made)

    def pull(self, branch: str) -> dict[str, Any]:
        self.push(branch)
        made = self.bot.post(
            f"/repos/{REPO}/pulls",
            json={
                "title": "Fix",
                "head": f"{BOT}:{branch}",
                "base": "main",
                "body": "Fixes #1" + self.footer(),
            },
        ).body
        self._record("create_pull_request", made["html_url"], "pull_request")
        return dict(made)

    def status(self) -> None:
        ThreadStatus(
            self.bot,
            repo=REPO,
            number=1,
            kind="issue",
            jobid=self.jobid,
            bot=BOT,
            go_away="go away",
            log_issue_url=self.log["html_url"],
        ).show(Status("done", headline="Completed", ok=True))

    def write_up(self) -> None:
        self.audit.close()
        text = (self.audit.path).read_text(encoding="utf-8")
        records = text.count("\n")
        head = self.audit.head
        for body in audit_comments(
            text,
            jobid=self.jobid,
            run="1",
            records=records,
            head=head,
            log_url=self.log["html_url"],
        ):
            self.bot.post(
                f"/repos/{CONTROL}/issues/{self.log['number']}/comments", json={"body": body}
            )


def head_of(gh: Any, branch: str) -> str | None:
    """The commit the bot's fork has at ``branch`` now (None: no such branch)."""
    return gh.state()["repos"][f"{BOT}/widgets"]["branches"].get(branch)


def commit_to_fork(gh: Any, who: str, branch: str, path: str) -> str:
    """``who`` pushes one commit onto the fork's ``branch`` (the Contents API); its sha."""
    made = gh.gateway(who).put(
        f"/repos/{BOT}/widgets/contents/{path}",
        json={"message": f"{who}'s change", "content": "eA==", "branch": branch},
    )
    return str(made.body["commit"]["sha"])


@pytest.fixture
def gh(local_github: Any) -> Any:
    local_github.load(world())
    return local_github


def ask_undo(gh: Any, who: str, *, jobid: str = "undo-1") -> UndoRequest:
    made = (
        gh.gateway(who).post(f"/repos/{REPO}/issues/1/comments", json={"body": f"@{BOT} undo"}).body
    )
    return UndoRequest(
        jobid=jobid,
        actor=who,
        repo=REPO,
        trust_level="external",
        comment_id=str(made["id"]),
        comment_url=made["html_url"],
        comment_type="issue_comment",
        timestamp=AT,
    )


def two_runs(gh: Any, tmp: Path) -> tuple[Run, Run, dict[str, Any]]:
    """bob's earlier run and alice's later one on issue 1, and carol's own comment."""
    earlier = Run(gh, tmp, "job-bob", "bob")
    earlier.comment(1, "Looked at it.")
    earlier.pull("tusk/fix-b")
    earlier.write_up()
    carol = dict(
        gh.gateway("carol")
        .post(f"/repos/{REPO}/issues/1/comments", json={"body": "Same here"})
        .body
    )
    later = Run(gh, tmp, "job-alice", "alice")
    later.comment(1, "Opened a PR.")
    later.issue("Follow-up")
    later.pull("tusk/fix-a")
    later.status()
    later.write_up()
    return earlier, later, carol


def thread_logins(gh: Any) -> list[tuple[str, str]]:
    comments = gh.gateway("alice").paginate(f"/repos/{REPO}/issues/1/comments")
    return [
        (
            c["user"]["login"],
            (first_marker(c["body"], "backlink") or first_marker(c["body"], "status") or {}).get(
                "jobid", ""
            ),
        )
        for c in comments
    ]


def test_undo_takes_back_exactly_the_latest_run_and_records_it(gh: Any, tmp_path: Path) -> None:
    _, later, carol = two_runs(gh, tmp_path)
    assert (
        execute(ask_undo(gh, "alice"), gateway=gh.gateway("agent"), settings=SETTINGS, now=AT) == 0
    )

    logins = thread_logins(gh)
    assert (BOT, "job-alice") not in logins  # its comment and its status comment are gone
    assert (BOT, "job-bob") in logins and ("carol", "") in logins and ("alice", "") in logins
    state = gh.state()["repos"]
    pulls = {
        p["number"]: p
        for p in gh.gateway("alice").paginate(f"/repos/{REPO}/pulls", params={"state": "all"})
    }
    assert [p["state"] for p in pulls.values() if p["head"]["ref"] == "tusk/fix-a"] == ["closed"]
    assert [p["state"] for p in pulls.values() if p["head"]["ref"] == "tusk/fix-b"] == ["open"]
    follow_up = next(
        i
        for i in gh.gateway("alice").paginate(f"/repos/{REPO}/issues", params={"state": "all"})
        if i["title"] == "Follow-up"
    )
    assert (follow_up["state"], follow_up["state_reason"]) == ("closed", "not_planned")
    branches = state[f"{BOT}/widgets"]["branches"]
    assert "tusk/fix-a" not in branches and "tusk/fix-b" in branches
    assert (
        gh.gateway("carol").get(f"/repos/{REPO}/issues/comments/{carol['id']}")["body"]
        == "Same here"
    )

    log_comments = list(
        gh.gateway("agent").paginate(f"/repos/{CONTROL}/issues/{later.log['number']}/comments")
    )
    [undone] = [c for c in log_comments if first_marker(c["body"], "undo")]
    assert "Undone by `alice`" in undone["body"] and "close the pull request" in undone["body"]
    found, verdict = verify_comments(log_comments)
    assert verdict.ok, verdict.message
    assert found is not None and found.run == "undo-undo-1"
    # The run's four writes, then five taken back (its status comment is not in its audit).
    assert verdict.records == 4 + 5
    # The bot stays allowed: undo blocks nothing.
    assert StateStore(gh.gateway("agent"), SETTINGS).read_blocklist().repos == ()


def test_undo_happens_once(gh: Any, tmp_path: Path) -> None:
    two_runs(gh, tmp_path)
    request = ask_undo(gh, "alice")
    execute(request, gateway=gh.gateway("agent"), settings=SETTINGS, now=AT)
    before = thread_logins(gh)
    assert (
        execute(request, gateway=gh.gateway("agent"), settings=SETTINGS, now=AT) == 0
    )  # a re-delivery
    assert thread_logins(gh) == before
    assert (BOT, "job-bob") in before  # the earlier run was not undone in its place


def test_undo_by_someone_else_is_refused_and_changes_nothing(gh: Any, tmp_path: Path) -> None:
    two_runs(gh, tmp_path)
    before = thread_logins(gh)
    assert (
        execute(ask_undo(gh, "mallory"), gateway=gh.gateway("agent"), settings=SETTINGS, now=AT)
        == 0
    )
    after = [entry for entry in thread_logins(gh) if entry[0] != "mallory"]
    [reply] = bot_replies(gh)
    assert after == [*before, (BOT, "")]  # only the reply, saying why and who can
    said = "mallory did not ask for this run and has no write access GitHub confirms"
    assert f"{said}: role read on alice/widgets" in reply
    assert "Who can: the run's requester, alice, or someone GitHub shows" in reply
    undo_logs = [
        i
        for i in gh.gateway("agent").paginate(f"/repos/{CONTROL}/issues", params={"state": "all"})
        if i["title"].startswith("[Undo]")
    ]
    [log] = undo_logs
    assert (log["state"], log["state_reason"]) == ("closed", "not_planned")
    assert "**Refused**: mallory did not ask for this run" in log["body"]


def test_a_collaborator_may_undo_someone_elses_run(gh: Any, tmp_path: Path) -> None:
    two_runs(gh, tmp_path)
    assert execute(ask_undo(gh, "bob"), gateway=gh.gateway("agent"), settings=SETTINGS, now=AT) == 0
    assert (BOT, "job-alice") not in thread_logins(gh)


def pulls_by_branch(gh: Any) -> dict[str, str]:
    pulls = gh.gateway("alice").paginate(f"/repos/{REPO}/pulls", params={"state": "all"})
    return {p["head"]["ref"]: p["state"] for p in pulls}


def undo_log_body(gh: Any) -> str:
    [log] = [
        i
        for i in gh.gateway("agent").paginate(f"/repos/{CONTROL}/issues", params={"state": "all"})
        if i["title"].startswith("[Undo]")
    ]
    return str(log["body"])


def bot_replies(gh: Any) -> list[str]:
    comments = gh.gateway("alice").paginate(f"/repos/{REPO}/issues/1/comments")
    return [
        c["body"] for c in comments if c["user"]["login"] == BOT and first_marker(c["body"], "undo")
    ]


def test_undo_after_another_run_pushed_to_the_branch_deletes_nothing_of_that_run(
    gh: Any, tmp_path: Path
) -> None:
    """Run A created tusk/fix-a; run B (another thread) fast-forwarded it. Undoing A closes
    A's pull request and leaves the branch with B's commit on it, and says why; undoing B
    leaves it too: B did not create it."""
    run_a = Run(gh, tmp_path, "job-a", "alice")
    run_a.comment(1, "Opened a PR.")
    run_a.pull("tusk/fix-a")
    run_a.write_up()
    run_b = Run(gh, tmp_path, "job-b", "bob")
    b_head = commit_to_fork(gh, "agent", "tusk/fix-a", "b.txt")
    assert run_b.push("tusk/fix-a", pushed="moved") == b_head
    run_b.write_up()

    assert (
        execute(ask_undo(gh, "alice"), gateway=gh.gateway("agent"), settings=SETTINGS, now=AT) == 0
    )
    assert head_of(gh, "tusk/fix-a") == b_head  # B's commit is still there
    assert pulls_by_branch(gh)["tusk/fix-a"] == "closed"  # A's pull request is taken back
    assert "someone pushed to it since" in undo_log_body(gh)
    log_comments = gh.gateway("agent").paginate(
        f"/repos/{CONTROL}/issues/{run_a.log['number']}/comments"
    )
    [undone] = [c["body"] for c in log_comments if first_marker(c["body"], "undo")]
    assert f"kept: {gh.url}/{BOT}/widgets/tree/tusk/fix-a" in undone
    [reply] = bot_replies(gh)
    assert "kept" in reply and "someone pushed to it since" in reply


def test_undo_of_a_run_that_only_moved_a_branch_leaves_it(gh: Any, tmp_path: Path) -> None:
    run_b = Run(gh, tmp_path, "job-b", "bob")
    run_b.comment(1, "Pushed onto the existing branch.")
    commit_to_fork(gh, "agent", "tusk/fix-a", "b.txt")
    head = run_b.push("tusk/fix-a", pushed="moved")
    run_b.write_up()
    assert execute(ask_undo(gh, "bob"), gateway=gh.gateway("agent"), settings=SETTINGS, now=AT) == 0
    assert head_of(gh, "tusk/fix-a") == head
    assert "did not create this branch (its push moved an existing branch)" in undo_log_body(gh)


def test_undo_after_a_human_pushed_to_the_agents_branch_keeps_the_human_commit(
    gh: Any, tmp_path: Path
) -> None:
    run = Run(gh, tmp_path, "job-a", "alice")
    run.comment(1, "Opened a PR.")
    run.pull("tusk/fix-a")
    run.write_up()
    human = commit_to_fork(gh, "bob", "tusk/fix-a", "bob.txt")
    assert (
        execute(ask_undo(gh, "alice"), gateway=gh.gateway("agent"), settings=SETTINGS, now=AT) == 0
    )
    assert head_of(gh, "tusk/fix-a") == human
    assert pulls_by_branch(gh)["tusk/fix-a"] == "closed"


def test_a_comment_edited_after_the_run_is_deleted_only_with_its_marker_intact(
    gh: Any, tmp_path: Path
) -> None:
    run = Run(gh, tmp_path, "job-a", "alice")
    kept_marker = run.comment(1, "First.")
    lost_marker = run.comment(1, "Second.")
    run.write_up()
    gh.advance(60)
    bob = gh.gateway("bob")  # a maintainer may edit anyone's comment
    path = f"/repos/{REPO}/issues/comments"
    bob.patch(f"{path}/{kept_marker['id']}", json={"body": kept_marker["body"] + "\nfixed a typo"})
    bob.patch(f"{path}/{lost_marker['id']}", json={"body": "bob's words now"})
    assert (
        execute(ask_undo(gh, "alice"), gateway=gh.gateway("agent"), settings=SETTINGS, now=AT) == 0
    )
    ids = [c["id"] for c in gh.gateway("alice").paginate(f"{path[:-9]}/1/comments")]
    assert kept_marker["id"] not in ids and lost_marker["id"] in ids
    body = undo_log_body(gh)
    assert "edited after the run; deleted because the run's marker in it is intact" in body
    assert "not this run's" in body


def test_a_forged_request_is_refused(gh: Any, tmp_path: Path) -> None:
    two_runs(gh, tmp_path)
    request = ask_undo(gh, "mallory").model_copy(update={"actor": "alice"})
    with pytest.raises(UserError, match="written by `mallory`, not `alice`"):
        execute(request, gateway=gh.gateway("agent"), settings=SETTINGS, now=AT)
    assert (BOT, "job-alice") in thread_logins(gh)


def test_undo_pages_through_githubs_repository_links(local_github: Any, tmp_path: Path) -> None:
    """Pages of two: every list undo reads spans pages, and each page after the first is
    fetched where GitHub's Link points, /repositories/{id}/..."""
    local_github.load({**world(), "settings": {"page_size": 2}})
    test_undo_takes_back_exactly_the_latest_run_and_records_it(local_github, tmp_path)
    by_id = [e for e in local_github.journal() if e["path"].startswith("/repositories/")]
    assert {e["token"] for e in by_id} >= {"agent"}
    assert local_github.take_violations() == []


def world_without_push() -> dict[str, Any]:
    """The bot's usual case: it works from its fork, with no push access to the repository,
    so GitHub will not show it anyone's role there. The repository belongs to the
    organisation alice (dave is a member, without write), and carol was invited to read."""
    data = world()
    data["users"] = [
        *[u for u in data["users"] if u["login"] != "alice"],
        {"login": "alice", "type": "Organization", "members": ["dave"]},
        {"login": "dave"},
        {"login": "erin"},
    ]
    data["tokens"] |= {name: {"user": name, "scopes": ["repo"]} for name in ("dave", "erin")}
    repo = next(r for r in data["repos"] if r["name"] == REPO)
    repo["collaborators"] = {"carol": "read"}
    return data


@pytest.mark.parametrize("who", ["carol", "dave"])
def test_undo_by_a_read_invitee_or_an_org_member_is_refused_where_the_bot_cannot_push(
    local_github: Any, tmp_path: Path, who: str
) -> None:
    """By ``author_association`` carol is a COLLABORATOR and dave a MEMBER; neither has
    write access, and GitHub will not confirm anyone's role to the bot here."""
    local_github.load(world_without_push())
    run = Run(local_github, tmp_path, "job-erin", "erin")
    run.comment(1, "Done.")
    run.write_up()
    request = ask_undo(local_github, who)
    association = local_github.gateway(who).get(
        f"/repos/{REPO}/issues/comments/{request.comment_id}"
    )["author_association"]
    assert association in ("COLLABORATOR", "MEMBER")
    assert execute(request, gateway=local_github.gateway("agent"), settings=SETTINGS, now=AT) == 0
    assert (BOT, "job-erin") in thread_logins(local_github)  # nothing was undone
    [reply] = bot_replies(local_github)
    assert "only to accounts with push access, and the bot has none there" in reply
    assert "Who can: the run's requester, erin" in reply
    assert "**Refused**" in undo_log_body(local_github)


def test_the_requester_may_undo_their_run_where_the_bot_cannot_push(
    local_github: Any, tmp_path: Path
) -> None:
    local_github.load(world_without_push())
    run = Run(local_github, tmp_path, "job-erin", "erin")
    run.comment(1, "Done.")
    run.write_up()
    request = ask_undo(local_github, "erin")
    assert execute(request, gateway=local_github.gateway("agent"), settings=SETTINGS, now=AT) == 0
    assert (BOT, "job-erin") not in thread_logins(local_github)
    assert "Rights: erin asked for this run." in undo_log_body(local_github)
