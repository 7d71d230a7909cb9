"""The hash-chained audit log and ``tusk audit verify``."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tusk.audit import chain as audit
from tusk.cli.main import main as tusk_main


def fixed_clock():
    start = datetime(2026, 1, 1, tzinfo=UTC)
    ticks = iter(range(10_000))
    return lambda: start + timedelta(seconds=next(ticks))


def write_log(path: Path, n: int = 4) -> None:
    log = audit.AuditLog(path, clock=fixed_clock())
    for i in range(n):
        log.append(
            tool="create_comment",
            kind="write",
            target=f"alice/widgets#{i}",
            args={"i": i},
            decision="allowed" if i % 2 == 0 else "refused",
            code=None if i % 2 == 0 else "LIMIT_EXCEEDED",
            reason=None if i % 2 == 0 else "too many",
            url=f"https://example.test/c/{i}" if i % 2 == 0 else None,
            created="comment" if i % 2 == 0 else None,
        )


# Every field of a record but its hash: "hash" sorts among them.
RECORD_KEYS = (
    "args_digest",
    "code",
    "created",
    "decision",
    "duration_ms",
    "kind",
    "prev_hash",
    "reason",
    "seq",
    "target",
    "time",
    "tool",
    "url",
    "a",
    "zz",
)


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def test_intact_chain_verifies(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    write_log(path)
    assert audit.verify_chain(path) is None
    records = audit.read_records(path)
    assert [r.seq for r in records] == [0, 1, 2, 3]
    assert records[0].prev_hash == audit.GENESIS_HASH
    assert [i.url for i in audit.created_items(records)] == [
        "https://example.test/c/0",
        "https://example.test/c/2",
    ]
    assert [r.code for r in audit.refusals(records)] == ["LIMIT_EXCEEDED", "LIMIT_EXCEEDED"]
    assert audit.head_hash(records) == records[-1].hash


def tamper_edit(rows: list[str]) -> list[str]:
    row = json.loads(rows[1])
    row["decision"] = "allowed"  # hide a refusal
    rows[1] = json.dumps(row)
    return rows


def tamper_edit_and_rehash(rows: list[str]) -> list[str]:
    row = json.loads(rows[1])
    row["reason"] = "nothing to see"
    row["hash"] = audit.record_hash(row)  # the forger recomputes this line's hash...
    rows[1] = json.dumps(row)
    return rows  # ...but line 3 still points at the old one


@pytest.mark.parametrize(
    ("tamper", "broken_line"),
    [
        (tamper_edit, 2),
        (tamper_edit_and_rehash, 3),
        (lambda rows: rows[:1] + rows[2:], 2),  # a refusal deleted
        (lambda rows: [rows[1], rows[0], *rows[2:]], 1),  # reordered
        (lambda rows: [*rows[:2], rows[1], *rows[2:]], 3),  # a line replayed
        (lambda rows: [*rows[:2], "not json", *rows[2:]], 3),
    ],
)
def test_tampered_audit_log_is_detected_at_the_first_broken_line(
    tmp_path: Path, tamper, broken_line: int
) -> None:
    path = tmp_path / "audit.jsonl"
    write_log(path)
    path.write_text("\n".join(tamper(lines(path))) + "\n")
    broken = audit.verify_chain(path)
    assert broken is not None and broken.line == broken_line
    with pytest.raises(ValueError, match=f"line {broken_line}"):
        audit.read_records(path)


def test_audit_verify_cli_exits_non_zero_naming_the_broken_line(tmp_path: Path, capsys) -> None:
    path = tmp_path / "audit.jsonl"
    write_log(path)
    assert tusk_main(["audit", "verify", str(path)]) == 0
    assert "chain intact" in capsys.readouterr().out
    path.write_text("\n".join(tamper_edit(lines(path))) + "\n")
    assert tusk_main(["audit", "verify", str(path)]) == 1
    assert "line 2" in capsys.readouterr().err


def test_audit_verify_on_a_file_that_is_no_audit_log_says_so(tmp_path: Path, capsys) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# notes\n")
    assert tusk_main(["audit", "verify", str(notes)]) == 1
    err = capsys.readouterr().err
    assert f"error: {notes}: not an audit log (its first line is not JSON" in err
    assert "chain broken" not in err
    # A chain whose first record was edited is still a broken chain.
    path = tmp_path / "audit.jsonl"
    write_log(path)
    edited = lines(path)
    first = json.loads(edited[0])
    first["target"] = "someone/else"
    edited[0] = json.dumps(first)
    path.write_text("\n".join(edited) + "\n")
    assert tusk_main(["audit", "verify", str(path)]) == 1
    assert "chain broken at line 1" in capsys.readouterr().err


def test_reopened_log_continues_the_chain(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    write_log(path, 2)
    write_log(path, 2)  # a restarted server appends to the same file
    assert audit.verify_chain(path) is None
    assert [r.seq for r in audit.read_records(path)] == [0, 1, 2, 3]


def test_reopening_a_tampered_log_refuses_to_extend_it(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    write_log(path, 2)
    path.write_text("\n".join(tamper_edit(lines(path))) + "\n")
    with pytest.raises(ValueError, match="chain broken"):
        audit.AuditLog(path)


record_values = st.one_of(
    st.none(),
    # Pieces that look like the line's own syntax, a key included, inside values.
    st.lists(st.sampled_from([*',"{}:\\ak\u00e9\n', ',"kind":', '"hash":']), max_size=12).map(
        "".join
    ),
    st.integers(-5, 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(RECORD_KEYS), record_values, min_size=1))
def test_a_sealed_line_is_the_canonical_json_of_the_whole_record(fields: dict) -> None:
    """One serialisation per append: the hash goes where its key sorts, so the line is
    byte for byte what serialising the record with its hash would give."""
    hashed, line = audit.seal(fields)
    assert hashed == audit.record_hash(fields)
    assert line == audit.canonical_json({**fields, "hash": hashed})


def test_a_given_args_digest_is_the_one_recorded_and_the_chain_holds(tmp_path: Path) -> None:
    log = audit.AuditLog(tmp_path / "audit.jsonl", clock=fixed_clock())
    args = {"tool": "get_issue", "repo": "alice/widgets", "number": 1}
    record = log.append(
        tool="get_issue",
        kind="read",
        target="alice/widgets",
        args=args,
        decision="allowed",
        args_digest=audit.digest(args),
    )
    assert record.args_digest == audit.digest(args)
    assert audit.verify_chain(tmp_path / "audit.jsonl") is None
