"""The shard codec: round trips in any order, every corruption caught, GitHub's limits kept."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shard_helpers import context_doc, payload_lines, shards_of

from tusk.cli.shards import join_lines
from tusk.shards import codec as shards

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=40,
)
JOBIDS = st.from_regex(r"[a-z0-9][a-z0-9-]{2,80}", fullmatch=True)


@settings(max_examples=150, deadline=None)
@given(value=JSON, jobid=JOBIDS, max_bytes=st.integers(4, 300), data=st.data())
def test_any_json_round_trips_in_any_order_with_duplicates(value, jobid, max_bytes, data):
    original = json.dumps(value).encode()
    job_shards = shards.split_into_shards(jobid, shards.encode_context(original), max_bytes)
    delivered = data.draw(st.permutations(job_shards))
    extra = data.draw(st.lists(st.sampled_from(job_shards), max_size=len(job_shards)))
    assert shards.join_shards([*delivered, *extra]) == original


def test_the_same_document_always_encodes_to_the_same_shards():
    # A re-dispatched job must produce identical duplicates, which join accepts.
    doc = context_doc(raw={"x": list(range(500))})
    assert shards_of(doc) == shards_of(doc)


def test_every_single_character_corruption_of_any_shard_is_detected():
    doc = context_doc(raw={"text": "typo " * 20})
    lines = payload_lines(shards_of(doc, max_bytes=96))
    assert len(lines) >= 3
    undetected = []
    for which, line in enumerate(lines):
        for position, original in enumerate(line):
            for replacement in {"0", "a", "-", '"', "A"} - {original}:
                corrupted = list(lines)
                corrupted[which] = line[:position] + replacement + line[position + 1 :]
                if not _detected(corrupted):
                    undetected.append((which, position, replacement))
    assert undetected == []


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=JSON, max_bytes=st.integers(4, 400), data=st.data())
def test_any_character_substitution_in_any_shard_is_detected(raw, max_bytes, data):
    lines = payload_lines(shards_of(context_doc(raw=raw), max_bytes=max_bytes))
    which = data.draw(st.integers(0, len(lines) - 1))
    position = data.draw(st.integers(0, len(lines[which]) - 1))
    replacement = data.draw(st.characters().filter(lambda c: c != lines[which][position]))
    corrupted = list(lines)
    corrupted[which] = lines[which][:position] + replacement + lines[which][position + 1 :]
    order = data.draw(st.permutations(corrupted))
    assert _detected(order)


def _detected(lines: list[str]) -> bool:
    """Corruption counts as detected when joining, or validating what was joined, fails."""
    try:
        data = join_lines(lines)
        jobid = json.loads(lines[0])["jobid"]
        shards.validate_context_document(data, jobid=jobid)
    except shards.ShardError:
        return True
    return False


def test_a_relabelled_single_shard_is_caught_by_the_document_check():
    (shard,) = shards_of(context_doc(jobid="job-0001"), max_bytes=60000)
    moved = shard.model_copy(update={"jobid": "job-0002"})
    data = shards.join_shards([moved])
    with pytest.raises(shards.ShardError, match=r"job-0002.*job-0001"):
        shards.validate_context_document(data, jobid="job-0002")


def test_missing_shards_are_named_with_the_job():
    job_shards = shards_of(context_doc(raw="x" * 2000), max_bytes=64)
    total = len(job_shards)
    with pytest.raises(shards.ShardError) as caught:
        shards.join_shards([s for s in job_shards if s.shard_index not in (1, 3)])
    assert caught.value.jobid == "job-0001"
    assert caught.value.missing == (1, 3)
    assert f"shards 1, 3 of {total} are missing" in caught.value.title


def test_conflicting_duplicates_are_refused_and_named():
    job_shards = shards_of(context_doc(raw="y" * 500), max_bytes=64)
    forged = job_shards[2].model_copy(update={"data": job_shards[2].data[::-1]})
    with pytest.raises(shards.ShardError) as caught:
        shards.join_shards([*job_shards, forged])
    assert caught.value.conflicting == (2,)
    assert "job-0001" in caught.value.title


def test_a_corrupt_shard_fails_the_checksum_and_names_the_job():
    job_shards = shards_of(context_doc(raw="z" * 500), max_bytes=64)
    flipped = job_shards[1].data.replace(
        job_shards[1].data[5], "Q" if job_shards[1].data[5] != "Q" else "R", 1
    )
    job_shards[1] = job_shards[1].model_copy(update={"data": flipped})
    with pytest.raises(shards.ShardError, match="job job-0001: the joined data does not match"):
        shards.join_shards(job_shards)


def test_shards_of_two_jobs_are_not_joined_together():
    mixed = shards_of(context_doc("job-aaaa"), "job-aaaa") + shards_of(
        context_doc("job-bbbb"), "job-bbbb"
    )
    with pytest.raises(shards.ShardError, match="job-aaaa, job-bbbb"):
        shards.join_shards(mixed)


def test_a_shard_size_that_would_break_the_dispatch_limit_is_refused():
    with pytest.raises(shards.UserError, match="out of range"):
        shards.split_into_shards("job-0001", "AAAA", shards.MAX_SHARD_BYTES + 1)


LONGEST_JOBID = "j" * 81
BYTES_20MB = 20 * 1024 * 1024


def _encoded_length_bound(context_bytes: int) -> int:
    """Base64 length of gzip's output for any input: zlib's compressBound plus the
    gzip header and trailer (18 bytes)."""
    n = context_bytes
    gzip_bytes = n + (n >> 12) + (n >> 14) + (n >> 25) + 13 + 18
    return 4 * -(-gzip_bytes // 3)


@settings(max_examples=40, deadline=None)
@given(
    context_bytes=st.integers(1, BYTES_20MB),
    max_bytes=st.sampled_from([shards.MIN_SHARD_BYTES, 1024, 49152, shards.MAX_SHARD_BYTES])
    | st.integers(shards.MIN_SHARD_BYTES, shards.MAX_SHARD_BYTES),
)
def test_no_dispatch_exceeds_githubs_limits_for_contexts_up_to_20mb(context_bytes, max_bytes):
    # The limits depend only on the encoded length, so the worst case (incompressible
    # context) is modelled by its length; the test below encodes a real 20 MB context.
    if max_bytes < 1024 and context_bytes > 1024 * 1024:
        max_bytes = 1024  # millions of 4-byte shards add nothing but time
    encoded = "A" * _encoded_length_bound(context_bytes)
    job_shards = shards.split_into_shards(LONGEST_JOBID, encoded, max_bytes)
    # Every shard but the last has the first one's data length; none has more digits
    # in its index than the last: those two are the largest payloads.
    for shard in (job_shards[0], job_shards[-1]):
        assert shards.payload_limit_problems(shards.dispatch_body(shard)) == []


def test_a_real_20mb_incompressible_context_fits_the_limits_and_round_trips():
    context = random.Random(7).randbytes(BYTES_20MB)
    encoded = shards.encode_context(context)
    assert len(encoded) <= _encoded_length_bound(BYTES_20MB)
    job_shards = shards.split_into_shards(LONGEST_JOBID, encoded, shards.MAX_SHARD_BYTES)
    for shard in job_shards:
        assert shards.payload_limit_problems(shards.dispatch_body(shard)) == []
    assert shards.join_shards(reversed(job_shards)) == context


def test_a_one_byte_context_is_one_shard_within_limits():
    (shard,) = shards.split_into_shards(LONGEST_JOBID, shards.encode_context(b"1"))
    assert shards.payload_limit_problems(shards.dispatch_body(shard)) == []
    assert shards.join_shards([shard]) == b"1"


def test_the_limit_check_catches_each_broken_limit():
    body = {"event_type": "x" * 101, "client_payload": {str(i): "v" * 7000 for i in range(11)}}
    problems = shards.payload_limit_problems(body)
    assert len(problems) == 3


def test_indices_in_messages_stay_short_for_hundreds_of_shards():
    assert shards.format_indices([5, 0, 1, 2, 7, 8]) == "0-2, 5, 7-8"
    assert shards.format_indices(range(500)) == "0-499"
