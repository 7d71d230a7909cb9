"""Hostile shard payloads are refused and recorded, never a crash (issue 25)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from shard_helpers import context_doc, shards_of
from test_shards_transport import CONTROL, SCENARIO, failure_issues

from tusk.cli.main import main as tusk_main
from tusk.contracts.models import MAX_ENCODED_CONTEXT, MAX_TOTAL_SHARDS
from tusk.shards import codec as shards
from tusk.shards import transport as shard_transport

TITLE_LIMIT = 256  # GitHub: "title is too long (maximum is 256 characters)"


@pytest.fixture
def github(local_github):
    local_github.load(SCENARIO)
    return local_github


@pytest.fixture
def edge_env(github, tmp_path, monkeypatch):
    config = tmp_path / "tusk.yml"
    config.write_text(f"bot: tusk-bot\ncontrol_repo: {CONTROL}\nallowed_users: [alice]\n")
    monkeypatch.setenv("TUSK_AGENT_TOKEN", "agent")
    monkeypatch.setenv("TUSK_GITHUB_API_URL", github.url)
    monkeypatch.setenv("GITHUB_REPOSITORY", CONTROL)
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "outputs"))
    monkeypatch.delenv("GITHUB_EVENT_PATH", raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    return config


def receive(tmp_path: Path, text: str, config: Path) -> int:
    payload = tmp_path / "event.json"
    payload.write_text(text)
    return tusk_main(["receive-shard", "--payload-file", str(payload), "--config", str(config)])


def good_payload() -> dict:
    (shard,) = shards_of(context_doc(), max_bytes=60000)
    return shards.shard_payload(shard)


def test_deeply_nested_json_is_refused_and_recorded(github, tmp_path, edge_env):
    nested = "[" * 30_000 + "]" * 30_000  # 60,000 characters, no RecursionError
    event = '{"action": "tusk-shard", "client_payload": {"jobid": "job-0042", "data": ' + nested
    code = receive(tmp_path, event + "}}", edge_env)
    assert code == 1
    (issue,) = failure_issues(github)
    assert f"nested deeper than {shard_transport.MAX_EVENT_DEPTH}" in issue["body"]
    assert len(issue["title"]) <= TITLE_LIMIT


def test_a_300_character_job_id_is_refused_and_its_record_fits_githubs_title_limit(
    github, tmp_path, edge_env
):
    event = {"action": "tusk-shard", "client_payload": {**good_payload(), "jobid": "j" * 300}}
    assert receive(tmp_path, json.dumps(event), edge_env) == 1
    (issue,) = failure_issues(github)
    assert len(issue["title"]) <= TITLE_LIMIT
    assert "j" * 100 not in issue["title"] + issue["body"]  # the id is not repeated whole
    assert "jobid" in issue["body"]


def test_a_billion_shards_is_refused_and_recorded(github, tmp_path, edge_env):
    event = {"action": "tusk-shard", "client_payload": {**good_payload(), "total_shards": 1e9}}
    assert receive(tmp_path, json.dumps(event), edge_env) == 1
    (issue,) = failure_issues(github)
    assert f"less than or equal to {MAX_TOTAL_SHARDS}" in issue["body"]
    assert "job-0001" in issue["title"]


def test_the_shard_total_is_bounded_against_the_size_limit():
    """A job carries at most MAX_ENCODED_CONTEXT characters: the splitter refuses more,
    and a shard whose total and length claim more is corrupt."""
    with pytest.raises(shards.UserError, match="at most"):
        shards.split_into_shards("job-0001", "A" * (MAX_ENCODED_CONTEXT + 4), 60000)
    payload = {**good_payload(), "shard_index": 0, "data": "A" * 1000}
    fits = MAX_ENCODED_CONTEXT // 1000 + 1
    assert shard_transport.shard_from_event({**payload, "total_shards": fits}).total_shards == fits
    with pytest.raises(shards.ShardError, match="more than"):
        shard_transport.shard_from_event({**payload, "total_shards": fits + 1})
    with pytest.raises(shards.ShardError, match="less than or equal"):
        shard_transport.shard_from_event({**payload, "total_shards": MAX_TOTAL_SHARDS + 1})


@pytest.mark.parametrize(
    "argv",
    [
        ["merge-shards", "--jobid", "job-0001", "--total-shards", "1", "--timeout-seconds", "-5"],
        ["merge-shards", "--jobid", "job-0001", "--total-shards", "0"],
        ["merge-shards", "--jobid", "job-0001", "--total-shards", str(10**9)],
        ["merge-shards", "--jobid", "job-0001", "--total-shards", "2", "--timeout-seconds", "nan"],
        ["shards", "split", "-", "--max-bytes", "0"],
        ["poll", "--once", "--interval", "-1"],
        ["demo", "--timeout-minutes", "0"],
        ["run-claude", "--max-retries", "-1"],
        ["run-claude", "--budget-seconds", "inf"],
        ["mcp", "serve", "--port", "70000"],
    ],
)
def test_every_numeric_option_has_its_range(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        tusk_main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "must be" in err


@pytest.mark.parametrize("variable", ["GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"])
def test_an_unusable_runner_file_is_a_clear_error_naming_the_variable(
    github, tmp_path, edge_env, monkeypatch, capsys, variable
):
    """receive-shard writes its outputs (a good shard) and its summary (a failure)."""
    monkeypatch.setenv(variable, str(tmp_path / "missing-folder" / "file"))
    event = {"action": "tusk-shard", "client_payload": good_payload()}
    text = json.dumps(event) if variable == "GITHUB_OUTPUT" else "{not json"
    payload = tmp_path / "event.json"
    payload.write_text(text)
    argv = ["receive-shard", "--payload-file", str(payload), "--context-file", str(tmp_path / "c")]
    code = tusk_main([*argv, "--config", str(edge_env)])
    err = capsys.readouterr().err
    assert code == 1
    assert f"{variable} names" in err and "cannot be written" in err
    assert "Traceback" not in err and "FileNotFoundError" not in err
