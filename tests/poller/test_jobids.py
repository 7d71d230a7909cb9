from __future__ import annotations

import re

from tusk.contracts.models import JOBID_PATTERN
from tusk.poller.jobids import job_id


def test_same_trigger_same_job_id() -> None:
    assert job_id("alice/widgets", "issue_comment", "42") == job_id(
        "Alice/Widgets", "issue_comment", "42"
    )


def test_different_trigger_nodes_get_different_ids() -> None:
    ids = {
        job_id("alice/widgets", "issue_comment", "42"),
        job_id("alice/widgets", "issue_comment", "43"),
        job_id("alice/widgets", "review_comment", "42"),
        job_id("alice/gadgets", "issue_comment", "42"),
    }
    assert len(ids) == 4


def test_job_id_fits_the_contract_for_odd_repository_names() -> None:
    for repo in ("a/b", "___/...", "Some.Org/" + "x" * 100, "-a-/-b-"):
        jobid = job_id(repo, "discussion_comment", "DC_kwDOabc==")
        assert re.fullmatch(JOBID_PATTERN, jobid), jobid


def test_job_id_is_readable() -> None:
    assert job_id("alice/widgets", "issue_comment", "42").startswith("alice-widgets-ic-")
