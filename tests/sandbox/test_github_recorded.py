"""The local GitHub against recordings of the real one (``@octokit/fixtures`` and Tusk's
own corpus): every recorded exchange it serves is replayed on the state the recording
implies and must answer as GitHub did, in every field and header Tusk reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tusk.sandbox.recorded import Exchange, differences, load_recordings
from tusk.sandbox.recorded_replay import fields_read, replay
from tusk.sandbox.recorded_seeds import REPOS

PRODUCT = Path(__file__).resolve().parents[2] / "src" / "tusk"
RECORDINGS = load_recordings()
READS = fields_read(PRODUCT)


@pytest.mark.parametrize("scenario", sorted(REPOS))
def test_the_stand_in_answers_each_recorded_exchange_as_github_did(scenario: str) -> None:
    replayed = replay(scenario, RECORDINGS.scenarios[scenario], reads=READS)
    served = [r for r in replayed if r.served]
    assert served, f"{scenario}: seeded, but the stand-in serves none of its exchanges"
    problems = [f"{r.exchange.name}: {p}" for r in served for p in r.problems]
    assert problems == []


def test_the_replay_covers_what_tusk_pages_through_and_reads_back() -> None:
    """Pages after the first through /repositories/{id}, a redirect to it, an error body."""
    served = {
        r.exchange.name
        for scenario in REPOS
        for r in replay(scenario, RECORDINGS.scenarios[scenario], reads=READS)
        if r.served
    }
    assert "paginate-issues#4 GET /repositories/1000/issues 200" in served
    assert "rename-repository#1 GET /repos/octokit-fixture-org/rename-repository 301" in served
    assert "errors#0 POST /repos/octokit-fixture-org/errors/labels 422" in served


def test_the_fields_tusk_reads_come_from_its_code() -> None:
    assert {"closed_by", "state_reason", "login", "full_name"} <= READS


def exchange(body: Any, headers: dict[str, str] | None = None, status: int = 200) -> Exchange:
    return Exchange("s", 0, "GET", "/repos/o/r/issues", status, {}, None, headers or {}, body)


def test_a_field_github_lacks_where_tusk_reads_it_fails_the_verdict() -> None:
    recorded = exchange([{"number": 1, "state": "closed"}])
    answered = [{"number": 1, "state": "closed", "closed_by": {"login": "bot"}}]
    assert differences(recorded, 200, {}, answered, reads={"closed_by", "number"}) == [
        "body[0].closed_by: the stand-in sends it, GitHub does not"
    ]
    # A field Tusk never reads does not matter.
    assert differences(recorded, 200, {}, answered, reads={"number"}) == []


def test_a_link_in_another_form_or_order_fails_the_verdict() -> None:
    github = (
        '<https://api.github.com/repositories/1/issues?per_page=3&page=1>; rel="prev", '
        '<https://api.github.com/repositories/1/issues?per_page=3&page=3>; rel="next", '
        '<https://api.github.com/repositories/1/issues?per_page=3&page=5>; rel="last", '
        '<https://api.github.com/repositories/1/issues?per_page=3&page=1>; rel="first"'
    )
    ours = (
        '<http://127.0.0.1/repos/o/r/issues?per_page=3&page=1>; rel="prev", '
        '<http://127.0.0.1/repos/o/r/issues?per_page=3&page=1>; rel="first", '
        '<http://127.0.0.1/repos/o/r/issues?per_page=3&page=3>; rel="next", '
        '<http://127.0.0.1/repos/o/r/issues?per_page=3&page=5>; rel="last"'
    )
    [problem] = differences(exchange([], {"link": github}), 200, {"Link": ours}, [], reads=())
    assert problem.startswith("Link:")
    same = github.replace("https://api.github.com/repositories/1", "http://x/repositories/7")
    assert differences(exchange([], {"link": github}), 200, {"Link": same}, [], reads=()) == []


def test_an_error_body_is_judged_by_message_and_errors() -> None:
    github = {
        "message": "Validation Failed",
        "errors": [{"resource": "Label", "code": "invalid", "field": "color"}],
    }
    recorded = exchange(github, status=422)
    assert differences(recorded, 201, {}, {"name": "foo"}, reads=()) == [
        "status: GitHub answers 422, the stand-in 201"
    ]
    ours = {**github, "errors": [{"resource": "Label", "code": "missing", "field": "color"}]}
    assert differences(recorded, 422, {}, ours, reads=())[0].startswith("error body:")
