"""What a push would publish: NUL-separated paths and secrets anywhere, pure."""

from __future__ import annotations

import pytest

from tests.mcp.gate.test_policy import config
from tusk.mcp.gate.policy import Refused
from tusk.mcp.push import checks as push_checks
from tusk.mcp.push.checks import Change

KEY = "sk-ant-api03-" + "x" * 40
TOKEN = "ghp_" + "a" * 36
Z = "0" * 40
A, B, C = "a" * 40, "b" * 40, "c" * 40


def test_raw_diff_records_are_read_nul_separated_with_any_byte_in_a_path() -> None:
    out = (
        f":000000 100644 {Z} {A} A\0".encode()
        + ".github/workflows/évil.yml".encode()
        + f"\0:100644 100644 {B} {C} M\0".encode()
        + b'tab\there "quoted"\nnewline\0'
        + f"::100644 100644 100644 {A} {B} {C} MM\0".encode()
        + b"merged.txt\0"
    )
    changes = push_checks.parse_raw_changes(out)
    assert changes == [
        Change(path=".github/workflows/évil.yml".encode(), new_mode="100644", new=A, old=(Z,)),
        Change(path=b'tab\there "quoted"\nnewline', new_mode="100644", new=C, old=(B,)),
        Change(path=b"merged.txt", new_mode="100644", new=C, old=(A, B)),
    ]


@pytest.mark.parametrize(
    "path",
    [
        ".github/workflows/ci.yml",
        ".github/workflows/évil.yml",
        ".github/workflows/tab\there.yml",
        '.github/workflows/"quoted".yml',
        ".github/workflows",
        ".GitHub/Workflows/ci.yml",
    ],
)
def test_workflow_paths_are_refused_however_they_are_spelt(path: str) -> None:
    with pytest.raises(Refused, match="FORBIDDEN_OPERATION"):
        push_checks.check_push_paths([b"README.md", path.encode()], config())
    push_checks.check_push_paths([path.encode()], config(allow_workflow_changes=True))


def test_near_misses_are_not_workflows() -> None:
    push_checks.check_push_paths(
        [b".github/dependabot.yml", b".github/workflows-notes.md", b"docs/.github/workflows/x"],
        config(),
    )


def scan(**overrides: object) -> None:
    values: dict[str, object] = {
        "branch": "tusk/fix",
        "commits": {A: b"tree x\nauthor a <a@b> 1 +0000\n\nFix\n"},
        "tree_names": [b"README.md"],
        "changes": [],
        "blobs": {},
    }
    values.update(overrides)
    push_checks.check_pushed_secrets(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("where", "overrides"),
    [
        ("the branch name", {"branch": f"tusk/{TOKEN}"}),
        ("commit", {"commits": {A: f"tree x\nauthor {TOKEN} <a@b> 1 +0000\n\nx\n".encode()}}),
        ("commit", {"commits": {A: f"tree x\nauthor a <{TOKEN}@b> 1 +0000\n\nx\n".encode()}}),
        ("commit", {"commits": {A: f"tree x\ncommitter c <c@d> 1 +0000\n\n{KEY}\n".encode()}}),
        ("a file or folder name", {"tree_names": [f"{TOKEN}.txt".encode()]}),
        (
            "the file",  # a binary file: the bytes are scanned
            {
                "changes": [Change(b"logo.png", "100644", B, (Z,))],
                "blobs": {B: b"\x89PNG\x00\xff" + KEY.encode() + b"\x00"},
            },
        ),
        (
            "the file",  # split by a zero-width space, github.com still shows it whole
            {
                "changes": [Change(b"n.txt", "100644", B, (Z,))],
                "blobs": {B: ("ghp_" + "a" * 18 + "\u200b" + "a" * 18).encode()},
            },
        ),
        (
            "the file",  # one of the server's own tokens, however plain
            {
                "changes": [Change(b"n.txt", "100644", B, (Z,))],
                "blobs": {B: b"token=read-token-8e3b1d0c5a9f"},
                "literals": ("read-token-8e3b1d0c5a9f",),
            },
        ),
    ],
)
def test_a_secret_anywhere_in_a_push_is_refused(where: str, overrides: dict[str, object]) -> None:
    with pytest.raises(Refused, match="SECRET_IN_BODY") as refused:
        scan(**overrides)
    assert where in refused.value.reason


def test_a_secret_the_file_already_held_is_not_new() -> None:
    old = b"FIXTURE=" + TOKEN.encode() + b"\n"
    scan(changes=[Change(b"t.txt", "100644", C, (B,))], blobs={B: old, C: old + b"more\n"})
    with pytest.raises(Refused, match="SECRET_IN_BODY"):
        scan(
            changes=[Change(b"t.txt", "100644", C, (B,))],
            blobs={B: old, C: old + b"KEY=" + KEY.encode()},
        )


def test_tree_entry_names_are_read_from_raw_trees() -> None:
    tree = b"100644 a b.txt\0" + b"\x01" * 20 + b"40000 d\tir\0" + b"\x02" * 20
    assert push_checks.tree_entry_names(tree) == [b"a b.txt", b"d\tir"]
