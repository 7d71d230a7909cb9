"""build-context against the local GitHub: the log issue, its limit, races, history and memory."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from bc_samples import REPO, comment, document, issue, issue_document, settings, trigger_comment

from tusk.cli import main as cli
from tusk.contracts.config import Settings
from tusk.contracts.models import ContextDocument, RunMetadata
from tusk.errors import UserError
from tusk.github.gateway import Gateway
from tusk.issues.log_issue import claim_log_issue, find_log_issues, record_failure
from tusk.issues.state import StateStore
from tusk.steps.build_context import log_body as lb
from tusk.steps.build_context import main as build_main
from tusk.text.markers import parse_markers

CONTROL = "alice/tusk-control"
RUN_URL = "https://github.com/alice/tusk-control/actions/runs/77"

SCENARIO: dict[str, Any] = {
    "now": "2026-11-30T11:30:00Z",  # after the samples' trigger
    "users": [{"login": "alice"}, {"login": "tusk-bot"}, {"login": "mallory"}],
    "tokens": {"agent": {"user": "tusk-bot", "scopes": ["repo"]}},
    "repos": [
        {
            "name": "alice/widgets",
            "collaborators": {"tusk-bot": "write"},
            "issues": [{"number": 7, "author": "alice", "title": "Widget breaks", "body": "x"}],
        },
        {
            "name": CONTROL,
            "private": True,
            "collaborators": {"tusk-bot": "write"},
            "labels": ["workflow", "bug"],
        },
    ],
}


@pytest.fixture
def github(local_github: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    local_github.load(SCENARIO)
    monkeypatch.setenv("TUSK_AGENT_TOKEN", "agent")
    monkeypatch.setenv("TUSK_GITHUB_API_URL", local_github.url)
    for name in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_ACTIONS"):
        monkeypatch.delenv(name, raising=False)
    return local_github


def write_inputs(tmp_path: Path, doc: ContextDocument, config: Settings) -> tuple[Path, Path]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    context_file = tmp_path / "context.json"
    context_file.write_text(doc.model_dump_json(), encoding="utf-8")
    config_file = tmp_path / "tusk.yml"
    config_file.write_text(
        yaml.safe_dump(config.model_dump(mode="json", exclude_defaults=True)), encoding="utf-8"
    )
    return context_file, config_file


def run_cli(
    tmp_path: Path, doc: ContextDocument, config: Settings, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, dict[str, str], Path]:
    context_file, config_file = write_inputs(tmp_path, doc, config)
    output = tmp_path / "github_output"
    output.write_text("", encoding="utf-8")
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    monkeypatch.chdir(tmp_path)  # relative paths, as in a workflow's workspace
    code = cli.main(
        [
            "build-context",
            "--context-file",
            context_file.name,
            "--config",
            str(config_file),
            "--output-dir",
            "run",
            "--run-url",
            RUN_URL,
        ]
    )
    return code, parse_outputs(output.read_text(encoding="utf-8")), tmp_path / "run"


def parse_outputs(text: str) -> dict[str, str]:
    outputs: dict[str, str] = {}
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        if "<<" in lines[index]:
            name, delimiter = lines[index].split("<<", 1)
            end = lines.index(delimiter, index + 1)
            outputs[name] = "\n".join(lines[index + 1 : end])
            index = end
        index += 1
    return outputs


def control_issues(gateway: Gateway) -> list[dict[str, Any]]:
    return list(gateway.paginate(f"/repos/{CONTROL}/issues", params={"state": "all"}))


def test_log_issue_title_label_marker_and_body_are_as_specified(
    github: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = issue_document(
        [comment(1, "I see it too <!-- psst -->", login="mallory", association="NONE")]
    )
    code, outputs, out_dir = run_cli(tmp_path, doc, settings(), monkeypatch)
    assert code == 0
    [logged] = control_issues(github.gateway("agent"))
    assert logged["title"] == "[Agent Log] alice/widgets #7 — 2026-11-30 11:00"
    assert [label["name"] for label in logged["labels"]] == ["workflow"]
    assert logged["user"]["login"] == "tusk-bot"
    body = logged["body"]
    [marker] = parse_markers(body, "job")
    assert marker == {
        "jobid": doc.jobid,
        "repo": REPO,
        "nonce": marker["nonce"],
        "requester": doc.actor,  # counted by the limits across runs
        "budget_usd": 5.0,  # held against the requester's cap while the run may spend
        "thread": "alice/widgets#7",  # held by this run while its log issue is open
    }
    assert len(marker["nonce"]) == 16
    assert body.split("\n")[1:4] == ["# Task", "", "> `@tusk-bot` please fix the resize bug"]
    context_md = (out_dir / "context.md").read_text(encoding="utf-8")
    assert "\n# Context\n\n" in body
    quoted = body.split("\n# Context\n\n", 1)[1].rstrip("\n").split("\n")
    assert all(line.startswith(">") for line in quoted)
    assert len(quoted) == len(context_md.rstrip("\n").split("\n"))
    # outputs and files
    assert outputs["proceed"] == "true"
    assert outputs["log-issue-number"] == str(logged["number"])
    assert outputs["log-issue-url"] == logged["html_url"]
    metadata = RunMetadata.model_validate_json(Path(outputs["run-json"]).read_text("utf-8"))
    assert metadata.log_issue_number == logged["number"]
    assert metadata.jobid == doc.jobid and metadata.control_repo == CONTROL
    assert metadata.claim_nonce == marker["nonce"]  # run-claude reports progress under it
    assert Path(metadata.task_path).read_text("utf-8").startswith("# Task")
    for path in (metadata.task_path, metadata.context_path, metadata.context_file):
        assert Path(path).is_absolute()  # run-claude reads relative paths from run.json's folder
    assert metadata.diff_path is None and outputs["diff-path"] == ""
    assert outputs["context-cut"] == "false" and outputs["full-context-path"] == ""
    assert set(outputs) == set(build_main.EMPTY_OUTPUTS)


def test_an_oversized_context_respects_the_limit_and_links_the_rest(
    github: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    comments = [comment(i, f"comment {i} " + "z" * 900) for i in range(1, 151)]
    doc = issue_document(comments)
    code, outputs, out_dir = run_cli(tmp_path, doc, settings(context_chars=200_000), monkeypatch)
    assert code == 0
    [logged] = control_issues(github.gateway("agent"))
    body = logged["body"]
    assert len((out_dir / "context.md").read_text("utf-8")) > 100_000
    assert 60_000 < len(body) <= 65_536
    assert body.startswith("<!-- tusk:job ")
    assert "> `@tusk-bot` please fix the resize bug" in body  # the task stays whole
    assert "The context was cut here" in body
    assert f"tusk-context-{doc.jobid}" in body and RUN_URL in body
    assert outputs["context-cut"] == "true"
    full = Path(outputs["full-context-path"]).read_text("utf-8")
    assert full == (out_dir / "context.md").read_text("utf-8")
    shown = body.split("\n# Context\n\n", 1)[1].split("\n\nThe context was cut here", 1)[0]
    assert shown.count("\n") + 1 < full.count("\n")
    assert outputs["artifact-name"] == f"tusk-context-{doc.jobid}"


def test_a_redelivered_job_opens_no_second_log_issue_and_stops(
    github: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = issue_document([])
    first_code, first, _ = run_cli(tmp_path / "a", doc, settings(), monkeypatch)
    second_code, second, second_dir = run_cli(tmp_path / "b", doc, settings(), monkeypatch)
    assert (first_code, second_code) == (0, 0)
    assert first["proceed"] == "true" and second["proceed"] == "false"
    assert second["log-issue-number"] == first["log-issue-number"]
    assert set(second) == set(build_main.EMPTY_OUTPUTS)
    assert len(control_issues(github.gateway("agent"))) == 1
    assert not (second_dir / "run.json").exists()


class RacingGateway(Gateway):
    """Lets a rival run create its log issue between our first look and our creation."""

    def __init__(self, rival: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rival = rival

    def post(self, path: str, json: Any = None, **kwargs: Any) -> Any:
        if self.rival is not None and path.endswith("/issues"):
            rival, self.rival = self.rival, None
            rival()
        return super().post(path, json, **kwargs)


def test_two_racing_claims_leave_one_open_log_issue_and_the_lowest_number_wins(
    github: Any,
) -> None:
    config = settings()
    body = lb.log_issue_body(
        jobid="alice-widgets-9000",
        repo=REPO,
        task_text="t",
        context_text="c",
        artifact_name="a",
        artifact_url=None,
    ).body
    claim = dict(jobid="alice-widgets-9000", title="[Agent Log] x", body=body, labels=["workflow"])
    rival_result: list[Any] = []

    def rival() -> None:
        rival_result.append(claim_log_issue(github.gateway("agent"), config, **claim))

    ours = RacingGateway(
        rival,
        api_url=github.url,
        token=github.gateway("agent")._token,
        token_name="agent",
        sleep=github.sleeps.append,
    )
    mine = claim_log_issue(ours, config, **claim)
    [theirs] = rival_result
    assert theirs.won and not mine.won
    assert mine.number == theirs.number
    issues = {i["number"]: i for i in control_issues(github.gateway("agent"))}
    assert len(issues) == 2
    open_ones = [n for n, i in issues.items() if i["state"] == "open"]
    assert open_ones == [theirs.number] == [min(issues)]
    loser = next(i for n, i in issues.items() if n != theirs.number)
    assert (loser["state"], loser["state_reason"]) == ("closed", "duplicate")


def test_two_concurrent_builds_for_one_job_leave_one_open_log_issue(
    github: Any, tmp_path: Path
) -> None:
    doc = issue_document([comment(1, "hello")])
    config = settings()
    barrier = threading.Barrier(2)
    results: list[dict[str, Any]] = []
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
                api_url=github.url,
                token=github.gateway("agent")._token,
                token_name="agent",
                sleep=github.sleeps.append,
            )
            results.append(
                build_main.build_and_claim(
                    doc,
                    config,
                    gateway,
                    context_file=tmp_path / "context.json",
                    out_dir=tmp_path / name,
                    artifact_name="a",
                    run_url=None,
                )
            )
        except BaseException as error:  # re-raised below, in the test's thread
            errors.append(error)

    threads = [threading.Thread(target=build, args=(n,)) for n in ("one", "two")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    assert sorted(r["proceed"] for r in results) == [False, True]
    issues = control_issues(github.gateway("agent"))
    assert len(issues) == 2
    assert [i["number"] for i in issues if i["state"] == "open"] == [
        min(i["number"] for i in issues)
    ]
    assert {r["log-issue-number"] for r in results} == {min(i["number"] for i in issues)}


def test_history_and_memory_are_read_as_specified(
    github: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = settings(history_entries=3, memory_total_chars=250)
    store = StateStore(github.gateway("agent"), config)
    for n in range(6):
        store.append_entry("history", f"run {n}: " + "h" * 150, jobid=f"job-{n:03d}")
    for n in range(5):
        store.append_entry("memory", f"fact {n} " + "m" * 90, jobid=f"job-{n:03d}")
    code, _outputs, out_dir = run_cli(tmp_path, issue_document([]), config, monkeypatch)
    assert code == 0
    context_md = (out_dir / "context.md").read_text("utf-8")
    history = context_md.split("## Agent history", 1)[1].split("## Memory", 1)[0]
    assert [n for n in range(6) if f"run {n}: " in history] == [3, 4, 5]
    assert history.index("run 5") < history.index("run 4") < history.index("run 3")
    assert "run 5: " + "h" * 150 in history  # never truncated
    memory = context_md.split("## Memory", 1)[1].split("## Left out", 1)[0]
    assert [n for n in range(5) if f"fact {n} " in memory] == [3, 4]
    assert "3 older entries left out" in memory


def test_a_failure_record_does_not_take_the_jobs_claim_and_is_settled_by_it(github: Any) -> None:
    config = settings()
    gateway = github.gateway("agent")
    url = record_failure(
        gateway, config, jobid="alice-widgets-9000", repo=REPO, title="shards lost", body="x"
    )
    [failure] = control_issues(gateway)
    assert failure["html_url"] == url
    assert sorted(label["name"] for label in failure["labels"]) == ["bug", "workflow"]
    body = lb.log_issue_body(
        jobid="alice-widgets-9000",
        repo=REPO,
        task_text="t",
        context_text="c",
        artifact_name="a",
        artifact_url=None,
    ).body
    claim = claim_log_issue(
        gateway,
        config,
        jobid="alice-widgets-9000",
        title="[Agent Log] x",
        body=body,
        labels=["workflow"],
    )
    assert claim.won
    found = find_log_issues(gateway, config, jobid="alice-widgets-9000", state="all")
    assert [(i.failure, i.repo) for i in found] == [(True, REPO), (False, REPO)]
    # The job ran after all: its failure record is settled, linking the run.
    assert [(i.state, i.state_reason) for i in found] == [("closed", "completed"), ("open", None)]
    [settled] = gateway.get(f"/repos/{config.control_repo}/issues/{found[0].number}/comments")
    assert claim.url in settled["body"]
    assert [i.number for i in find_log_issues(gateway, config, repo="ALICE/widgets")] == [
        claim.number
    ]
    assert find_log_issues(gateway, config, owner="bob") == []


def test_pr_build_writes_the_diff_file(
    github: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw = {
        "kind": "pull_request",
        "thread": {**issue(), "head": {"ref": "fix"}, "base": {"ref": "main"}},
        "comments": [trigger_comment()],
        "diff": "diff --git a/x b/x\n+y\n" * 10,
    }
    code, outputs, out_dir = run_cli(tmp_path, document(raw), settings(), monkeypatch)
    assert code == 0
    assert Path(outputs["diff-path"]).read_text("utf-8") == raw["diff"]
    metadata = json.loads(Path(outputs["run-json"]).read_text("utf-8"))
    assert metadata["diff_path"] == outputs["diff-path"]
    assert "+y" not in (out_dir / "context.md").read_text("utf-8")


def test_a_file_that_is_not_a_context_document_fails_with_what_to_do(
    github: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "context.json"
    bad.write_text('{"jobid": "x"}', encoding="utf-8")
    _, config_file = write_inputs(tmp_path / "cfg", issue_document([]), settings())
    code = cli.main(["build-context", "--context-file", str(bad), "--config", str(config_file)])
    assert code == 1
    err = capsys.readouterr().err
    assert "is not a Tusk context document" in err and "merge-shards" in err
    assert control_issues(github.gateway("agent")) == []


def test_a_dropped_workflow_label_is_an_error_not_a_log_issue_nobody_finds(github: Any) -> None:
    # Without push access GitHub silently drops labels; an unlabelled log issue is
    # invisible to the next claim, so each re-delivery would open another one.
    scenario = json.loads(json.dumps(SCENARIO))
    scenario["repos"][1]["collaborators"] = {}
    scenario["repos"][1]["private"] = False
    github.load(scenario)
    with pytest.raises(UserError, match="push"):
        claim_log_issue(
            github.gateway("agent"),
            settings(),
            jobid="alice-widgets-9000",
            title="[Agent Log] x",
            body="b",
            labels=["workflow"],
        )


def test_a_refused_permission_marker_says_why_in_the_log_issue(
    github: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A marker typed with CJK brackets fails closed; the log issue says so and why."""
    from tusk.poller.permissions import effective_permissions

    text = "@tusk-bot 【permissions: no-pr】 please fix the resize bug"
    permissions = effective_permissions(settings().default_permissions(), text)
    doc = issue_document([], trigger_body=text).model_copy(
        update={"permission_config": permissions}
    )
    code, _, _ = run_cli(tmp_path, doc, settings(), monkeypatch)
    assert code == 0
    [logged] = control_issues(github.gateway("agent"))
    task = logged["body"].split("\n# Context\n", 1)[0]
    assert "the permission marker could not be read**, so the most restrictive" in task
    assert "looks like a permission marker but is not one" in task
    assert "square brackets" in task


def test_the_claim_puts_the_queued_status_on_the_thread_once(
    github: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = issue_document([])
    assert run_cli(tmp_path / "a", doc, settings(), monkeypatch)[0] == 0
    assert run_cli(tmp_path / "b", doc, settings(), monkeypatch)[0] == 0  # a re-delivery
    comments = list(github.gateway("agent").paginate(f"/repos/{REPO}/issues/7/comments"))
    [status] = [c for c in comments if parse_markers(c["body"], "status")]
    assert status["user"]["login"] == "tusk-bot" and "**Queued.**" in status["body"]
    [logged] = control_issues(github.gateway("agent"))
    assert logged["html_url"] in status["body"]  # the footer's run log


def test_without_thread_status_the_thread_gets_no_comment(
    github: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    off = Settings.model_validate({**settings().model_dump(), "feedback": {"thread_status": False}})
    assert run_cli(tmp_path, issue_document([]), off, monkeypatch)[0] == 0
    assert list(github.gateway("agent").paginate(f"/repos/{REPO}/issues/7/comments")) == []


def test_a_second_run_sent_for_a_thread_with_a_run_in_flight_hands_its_mention_over(
    github: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two pollers, a lagging listing or act's ignored ``concurrency:`` can send a second
    run for one thread: its claim sees the first and hands the mention over as a
    follow-up, once, and keeps its own claim so a re-delivery stops there (C1)."""
    first = issue_document([])
    code, outputs, _ = run_cli(tmp_path / "first", first, settings(), monkeypatch)
    assert code == 0 and outputs["proceed"] == "true"
    second = issue_document(
        [], trigger_id="9001", trigger_body="@tusk-bot also add a test", jobid="alice-widgets-9001"
    )
    for attempt in ("second", "again"):  # the same job delivered twice
        code, outputs, _ = run_cli(tmp_path / attempt, second, settings(), monkeypatch)
        assert code == 0 and outputs["proceed"] == "false"
    gateway = github.gateway("agent")
    holder, handed = sorted(control_issues(gateway), key=lambda item: item["number"])
    assert holder["state"] == "open"
    assert (handed["state"], handed["state_reason"]) == ("closed", "completed")
    comments = list(gateway.paginate(f"/repos/{CONTROL}/issues/{holder['number']}/comments"))
    records = [m for c in comments for m in parse_markers(c["body"], "followup")]
    assert [(r["node"], r["text"], r["author"]) for r in records] == [
        ("issue_comment:9001", "@tusk-bot also add a test", first.actor)
    ]


def test_a_run_on_a_thread_whose_earlier_run_ended_proceeds(
    github: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _, _ = run_cli(tmp_path / "first", issue_document([]), settings(), monkeypatch)
    gateway = github.gateway("agent")
    [first] = control_issues(gateway)
    gateway.patch(f"/repos/{CONTROL}/issues/{first['number']}", json={"state": "closed"})
    second = issue_document([], trigger_id="9001", jobid="alice-widgets-9001")
    code, outputs, _ = run_cli(tmp_path / "second", second, settings(), monkeypatch)
    assert code == 0 and outputs["proceed"] == "true"
