"""receive-shard and merge-shards against the local GitHub: order, duplicates,
concurrent completers, missing and corrupt shards (MISSION A1, A2)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest
from shard_helpers import context_doc, noisy, shards_of

from tusk.cli.main import main as tusk_main
from tusk.contracts.config import Settings
from tusk.contracts.models import Shard
from tusk.issues.log_issue import claim_log_issue
from tusk.shards import codec as shards
from tusk.shards import transport as shard_transport
from tusk.steps.merge_shards import merge_shards
from tusk.steps.receive_shard import receive_shard

ROOT = Path(__file__).resolve().parents[2]
UPLOAD = ROOT / "src" / "tusk" / "sandbox" / "stand-ins" / "upload-artifact" / "upload.py"
CONTROL = "alice/tusk-control"
SCENARIO = {
    "users": [{"login": "tusk-bot"}, {"login": "alice"}],
    "tokens": {
        "agent": {"user": "tusk-bot", "scopes": ["repo"]},
        "alice": {"user": "alice", "scopes": ["repo"]},
    },
    "repos": [
        {
            "name": CONTROL,
            "collaborators": {"tusk-bot": "write"},
            "labels": ["workflow", "bug"],
        }
    ],
}
SETTINGS = Settings(bot="tusk-bot", control_repo=CONTROL, allowed_users=("alice",))


class FakeTime:
    """A clock that moves only when slept on."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture
def github(local_github):
    local_github.load(SCENARIO)
    return local_github


def store(github, shard: Shard, work: Path, run_id: int) -> None:
    """What receive-shard's first two steps do: write the shard, upload it (the stand-in)."""
    received = receive_shard.receive(shard, work_dir=work, context_file=work / "unused.json")
    assert received.artifact_file is not None and received.artifact_name is not None
    env = {
        "PATH": os.environ["PATH"],
        "ARTIFACT_NAME": received.artifact_name,
        "ARTIFACT_PATH": str(received.artifact_file),
        "IF_NO_FILES_FOUND": "error",
        "API_URL": github.url,
        "REPOSITORY": CONTROL,
        "RUN_ID": str(run_id),
        "UPLOAD_TOKEN": "agent",
    }
    done = subprocess.run([sys.executable, str(UPLOAD)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def deliver(github, shard: Shard, work: Path, run_id: int) -> bool:
    """One dispatch through receive-shard; returns its ``complete``."""
    store(github, shard, work / f"run-{run_id}", run_id)
    gap = receive_shard.first_missing_index(
        github.gateway("agent"),
        CONTROL,
        shard.jobid,
        shard.total_shards,
        own_index=shard.shard_index,
    )
    return gap is None


def merge(github, jobid: str, total: int, target: Path, fake: FakeTime, timeout: float = 60.0):
    return merge_shards.merge(
        github.gateway("agent"),
        CONTROL,
        jobid,
        total,
        target,
        policy=merge_shards.WaitPolicy(timeout=timeout, first_delay=2.0, max_delay=16.0),
        sleep=fake.sleep,
        clock=fake.clock,
        log=lambda _: None,
    )


def failure_issues(github) -> list[dict]:
    return github.gateway("agent").get(
        f"/repos/{CONTROL}/issues", params={"labels": "bug", "state": "all"}
    )


def test_shards_out_of_order_complete_only_on_the_last_and_merge_exactly(github, tmp_path):
    doc = context_doc(raw={"comments": [f"comment {i}" for i in range(300)]})
    job = shards_of(doc, max_bytes=512)
    assert len(job) >= 3
    order = [*job[1:], job[0]]
    completes = [deliver(github, shard, tmp_path, run) for run, shard in enumerate(order, 1)]
    assert completes == [False] * (len(job) - 1) + [True]
    target = tmp_path / "context.json"
    assert merge(github, "job-0001", len(job), target, FakeTime()) == doc
    assert target.read_bytes() == doc


def test_a_shard_delivered_twice_is_merged_once_as_an_identical_duplicate(github, tmp_path):
    doc = context_doc(raw=noisy("twice"))
    job = shards_of(doc, max_bytes=512)
    for run, shard in enumerate([job[0], job[1], job[1], *job[2:]], 1):
        deliver(github, shard, tmp_path, run)
    listed = shard_transport.live_artifacts(github.gateway("agent"), CONTROL, "job-0001-shard-1")
    assert len(listed) == 2
    assert merge(github, "job-0001", len(job), tmp_path / "c.json", FakeTime()) == doc


def test_a_one_shard_job_is_complete_at_once_and_stores_no_artifact(github, tmp_path):
    doc = context_doc()
    (shard,) = shards_of(doc, max_bytes=60000)
    received = receive_shard.receive(shard, work_dir=tmp_path, context_file=tmp_path / "ctx.json")
    assert received.complete and received.artifact_file is None
    assert (tmp_path / "ctx.json").read_bytes() == doc


def test_two_concurrent_completers_lead_to_exactly_one_winning_claim(github, tmp_path):
    doc = context_doc(raw=noisy("race"))
    job = shards_of(doc, max_bytes=512)
    for run, shard in enumerate(job[:-2], 1):
        assert not deliver(github, shard, tmp_path, run)
    # The last two shards are stored at the same moment, then both look: both complete.
    stored = threading.Barrier(2)
    results: dict[int, object] = {}

    def delivery(shard: Shard, run: int) -> None:
        try:
            store(github, shard, tmp_path / f"run-{run}", run)
            stored.wait(timeout=30)
            gateway = github.gateway("agent")
            complete = (
                receive_shard.first_missing_index(
                    gateway, CONTROL, shard.jobid, shard.total_shards, own_index=shard.shard_index
                )
                is None
            )
            merged = merge(
                github, shard.jobid, shard.total_shards, tmp_path / f"{run}.json", FakeTime()
            )
            claim = claim_log_issue(
                gateway,
                SETTINGS,
                jobid=shard.jobid,
                title="[Agent Log] alice/widgets #1 — 2026-11-30 06:00",
                body=f"# Task\n> run {run}\n",
                labels=["workflow"],
            )
            results[run] = (complete, merged, claim)
        except BaseException as error:  # handed to the main thread's assertion
            results[run] = error

    threads = [
        threading.Thread(target=delivery, args=(shard, 100 + i)) for i, shard in enumerate(job[-2:])
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    outcomes = list(results.values())
    assert all(isinstance(o, tuple) for o in outcomes), outcomes
    assert [o[0] for o in outcomes] == [True, True]
    assert all(o[1] == doc for o in outcomes)
    claims = [o[2] for o in outcomes]
    assert sorted(c.won for c in claims) == [False, True]
    assert len({c.number for c in claims}) == 1  # the loser points at the winner's issue


def test_a_missing_shard_is_waited_for_with_bounded_backoff_then_named(github, tmp_path):
    job = shards_of(context_doc(raw=noisy("gap")), max_bytes=512)
    total = len(job)
    for run, shard in enumerate(job, 1):
        if shard.shard_index != 1:
            deliver(github, shard, tmp_path, run)
    fake = FakeTime()
    with pytest.raises(shards.ShardError) as caught:
        merge(github, "job-0001", total, tmp_path / "c.json", fake, timeout=60)
    assert caught.value.jobid == "job-0001"
    assert caught.value.missing == (1,)
    assert "after waiting 60s" in caught.value.problem
    assert fake.sleeps == [2.0, 4.0, 8.0, 16.0, 16.0, 14.0]
    assert sum(fake.sleeps) == 60
    assert not (tmp_path / "c.json").exists()


def test_a_shard_arriving_during_the_wait_is_merged(github, tmp_path):
    doc = context_doc(raw=noisy("late"))
    job = shards_of(doc, max_bytes=512)
    for run, shard in enumerate(job[:-1], 1):
        deliver(github, shard, tmp_path, run)
    fake = FakeTime()

    def sleep_then_arrive(seconds: float) -> None:
        FakeTime.sleep(fake, seconds)
        if len(fake.sleeps) == 2:
            store(github, job[-1], tmp_path / "late", 99)

    fake.sleep = sleep_then_arrive  # type: ignore[method-assign]
    assert merge(github, "job-0001", len(job), tmp_path / "c.json", fake) == doc
    assert fake.sleeps == [2.0, 4.0]


@pytest.fixture
def edge_env(github, tmp_path, monkeypatch):
    """The environment the actions' CLI edge reads, pointed at the local GitHub."""
    config = tmp_path / "tusk.yml"
    config.write_text(f"bot: tusk-bot\ncontrol_repo: {CONTROL}\nallowed_users: [alice]\n")
    monkeypatch.setenv("TUSK_AGENT_TOKEN", "agent")
    monkeypatch.setenv("TUSK_GITHUB_API_URL", github.url)
    monkeypatch.setenv("GITHUB_REPOSITORY", CONTROL)
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "outputs"))
    monkeypatch.delenv("GITHUB_EVENT_PATH", raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    return config


def test_a_missing_shard_fails_merge_and_is_recorded_in_the_control_repo(
    github, tmp_path, edge_env
):
    job = shards_of(context_doc(raw=noisy("lost")), max_bytes=512)
    for run, shard in enumerate(job, 1):
        if shard.shard_index != 2:
            deliver(github, shard, tmp_path, run)
    code = tusk_main(
        [
            *("merge-shards", "--jobid", "job-0001", "--total-shards", str(len(job))),
            *("--timeout-seconds", "0"),
            *("--config", str(edge_env), "--context-file", str(tmp_path / "c.json")),
        ]
    )
    assert code == 1
    (issue,) = failure_issues(github)
    assert {label["name"] for label in issue["labels"]} == {"workflow", "bug"}
    assert "job-0001" in issue["title"]
    assert f"shards 2 of {len(job)} are missing" in issue["body"]
    assert "| missing | 2 |" in issue["body"]
    assert "Mention the bot again" in issue["body"]


def test_a_corrupt_shard_fails_merge_and_is_recorded(github, tmp_path, edge_env):
    job = shards_of(context_doc(raw=noisy("rot")), max_bytes=512)
    data = job[1].data
    job[1] = job[1].model_copy(
        update={"data": data[:10] + ("B" if data[10] != "B" else "C") + data[11:]}
    )
    for run, shard in enumerate(job, 1):
        deliver(github, shard, tmp_path, run)
    code = tusk_main(
        [
            *("merge-shards", "--jobid", "job-0001", "--total-shards", str(len(job))),
            *("--timeout-seconds", "0"),
            *("--config", str(edge_env), "--context-file", str(tmp_path / "c.json")),
        ]
    )
    assert code == 1
    (issue,) = failure_issues(github)
    assert "does not match its checksum" in issue["body"]
    assert not (tmp_path / "c.json").exists()


def test_an_unreadable_artifact_is_named_as_corrupt_without_waiting(github, tmp_path):
    job = shards_of(context_doc(raw=noisy("zip")), max_bytes=512)
    for run, shard in enumerate(job, 1):
        if shard.shard_index != 0:
            deliver(github, shard, tmp_path, run)
    bogus = tmp_path / "job-0001-shard-0.json"
    bogus.write_text(json.dumps({"jobid": "job-0001", "shard_index": 5}))
    env = {
        "PATH": os.environ["PATH"],
        "ARTIFACT_NAME": "job-0001-shard-0",
        "ARTIFACT_PATH": str(bogus),
        "API_URL": github.url,
        "REPOSITORY": CONTROL,
        "RUN_ID": "77",
        "UPLOAD_TOKEN": "agent",
    }
    subprocess.run([sys.executable, str(UPLOAD)], env=env, check=True, capture_output=True)
    fake = FakeTime()
    with pytest.raises(shards.ShardError) as caught:
        merge(github, "job-0001", len(job), tmp_path / "c.json", fake)
    assert caught.value.corrupt == (0,)
    assert fake.sleeps == []


def test_an_invalid_dispatch_is_recorded_by_receive_shard(github, tmp_path, edge_env):
    payload = tmp_path / "event.json"
    payload.write_text(
        json.dumps({"action": "tusk-shard", "client_payload": {"jobid": "job-0009"}})
    )
    code = tusk_main(["receive-shard", "--payload-file", str(payload), "--config", str(edge_env)])
    assert code == 1
    (issue,) = failure_issues(github)
    assert "job-0009" in issue["title"]


def receive_event(tmp_path: Path, text: str, edge_env: Path) -> int:
    payload = tmp_path / "event.json"
    payload.write_text(text)
    return tusk_main(["receive-shard", "--payload-file", str(payload), "--config", str(edge_env)])


def test_a_non_json_dispatch_is_recorded_as_a_failure(github, tmp_path, edge_env):
    assert receive_event(tmp_path, "{not json", edge_env) == 1
    (issue,) = failure_issues(github)
    assert "not JSON" in issue["body"]


def test_a_dispatch_that_is_not_an_object_is_recorded(github, tmp_path, edge_env):
    assert receive_event(tmp_path, '["a", "list"]', edge_env) == 1
    (issue,) = failure_issues(github)
    assert "not a JSON object" in issue["body"]


def test_an_index_beyond_the_total_is_refused_and_recorded(github, tmp_path, edge_env):
    (shard,) = shards_of(context_doc(), max_bytes=60000)
    bad = {**shards.shard_payload(shard), "shard_index": 3, "total_shards": 2}
    event = json.dumps({"action": "tusk-shard", "client_payload": bad})
    assert receive_event(tmp_path, event, edge_env) == 1
    (issue,) = failure_issues(github)
    assert shard.jobid in issue["title"]
    assert "shard_index 3 is not below total_shards 2" in issue["body"]


def test_an_index_equal_to_the_total_is_refused():
    (shard,) = shards_of(context_doc(), max_bytes=60000)
    with pytest.raises(shards.ShardError, match="not below total_shards 1"):
        shard_transport.shard_from_event({**shards.shard_payload(shard), "shard_index": 1})


def test_a_payload_over_the_dispatch_limit_is_refused_and_recorded(github, tmp_path, edge_env):
    (shard,) = shards_of(context_doc(), max_bytes=60000)
    big = {**shards.shard_payload(shard), "data": "A" * 70_000}
    event = json.dumps({"action": "tusk-shard", "client_payload": big})
    assert receive_event(tmp_path, event, edge_env) == 1
    (issue,) = failure_issues(github)
    assert "GitHub carries at most 65535" in issue["body"]


def test_a_shard_data_string_over_the_shard_limit_is_refused():
    (shard,) = shards_of(context_doc(), max_bytes=60000)
    with pytest.raises(shards.ShardError, match="data"):
        shard_transport.shard_from_event({**shards.shard_payload(shard), "data": "A" * 60_004})


def test_an_event_file_far_over_any_dispatch_is_refused_unread(github, tmp_path, edge_env):
    assert receive_event(tmp_path, " " * (shard_transport.MAX_EVENT_BYTES + 10), edge_env) == 1
    (issue,) = failure_issues(github)
    assert "larger than 1024 KB" in issue["body"]


def test_shard_from_zip_refuses_a_shard_filed_under_another_index():
    (shard,) = shards_of(context_doc(), max_bytes=60000)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("x.json", json.dumps(shards.shard_payload(shard)))
    with pytest.raises(shards.ShardError, match="holds shard 0"):
        merge_shards.shard_from_zip(buffer.getvalue(), jobid="job-0001", index=3)


def test_receive_refuses_another_event_type():
    with pytest.raises(shards.UserError, match="tusk-go-away"):
        shard_transport.shard_from_event({"action": "tusk-go-away", "client_payload": {}})


def test_a_redispatched_job_merges_a_complete_generation_never_a_mix(github, tmp_path):
    # The poller re-ran after a crash: same job id, new bytes (a new timestamp).
    first = context_doc(raw=noisy("gen-1"))
    second = context_doc(raw=noisy("gen-2"))
    old, new = shards_of(first, max_bytes=512), shards_of(second, max_bytes=512)
    assert len(old) == len(new) >= 3
    for run, shard in enumerate([*old, new[0], new[-1]], 1):
        deliver(github, shard, tmp_path, run)
    assert merge(github, "job-0001", len(old), tmp_path / "any.json", FakeTime()) == first
    fake = FakeTime()

    def sleep_then_arrive(seconds: float) -> None:
        FakeTime.sleep(fake, seconds)
        for index, shard in enumerate(new[1:-1], 1):
            store(github, shard, tmp_path / f"late-{index}", 200 + index)

    fake.sleep = sleep_then_arrive  # type: ignore[method-assign]
    pinned = merge_shards.merge(
        github.gateway("agent"),
        CONTROL,
        "job-0001",
        len(new),
        tmp_path / "pinned.json",
        checksum=new[0].checksum,
        sleep=fake.sleep,
        clock=fake.clock,
        log=lambda _: None,
    )
    assert pinned == second
    assert len(fake.sleeps) == 1


def test_a_pinned_generation_with_holes_names_them_as_another_dispatch(github, tmp_path):
    old = shards_of(context_doc(raw=noisy("gen-a")), max_bytes=512)
    new = shards_of(context_doc(raw=noisy("gen-b")), max_bytes=512)
    for run, shard in enumerate([*old, new[0]], 1):
        deliver(github, shard, tmp_path, run)
    with pytest.raises(shards.ShardError) as caught:
        merge_shards.merge(
            github.gateway("agent"),
            CONTROL,
            "job-0001",
            len(new),
            tmp_path / "c.json",
            checksum=new[0].checksum,
            policy=merge_shards.WaitPolicy(timeout=0),
            log=lambda _: None,
        )
    holes = tuple(range(1, len(new)))
    assert caught.value.conflicting == holes
    assert "exist only with another checksum" in caught.value.problem


def test_github_refusing_the_artifacts_is_recorded_not_dropped(github, tmp_path, edge_env):
    # e.g. a token without Actions read access: the job is lost just as surely.
    job = shards_of(context_doc(raw=noisy("denied")), max_bytes=512)
    for run, shard in enumerate(job, 1):
        deliver(github, shard, tmp_path, run)
    github.add_fault(
        "GET", r"/actions/artifacts", status=403, count=None, message="Resource not accessible"
    )
    code = tusk_main(
        [
            *("merge-shards", "--jobid", "job-0001", "--total-shards", str(len(job))),
            *("--timeout-seconds", "0"),
            *("--config", str(edge_env), "--context-file", str(tmp_path / "c.json")),
        ]
    )
    assert code != 0
    (issue,) = failure_issues(github)
    assert "job-0001" in issue["title"]
    assert "reading its shards failed" in issue["body"]
    assert not (tmp_path / "c.json").exists()


def test_receive_check_that_cannot_list_artifacts_is_recorded(github, tmp_path, edge_env):
    job = shards_of(context_doc(raw=noisy("unlisted")), max_bytes=512)
    payload = tmp_path / "event.json"
    payload.write_text(json.dumps({"action": "tusk-shard", "client_payload": job[-1].model_dump()}))
    github.add_fault(
        "GET", r"/actions/artifacts", status=403, count=None, message="Resource not accessible"
    )
    code = tusk_main(
        ["receive-shard", "--check", "--payload-file", str(payload), "--config", str(edge_env)]
    )
    assert code != 0
    (issue,) = failure_issues(github)
    assert "job-0001" in issue["title"]
    assert "listing its stored shards failed" in issue["body"]
