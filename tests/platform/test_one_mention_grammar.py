"""One module defines what an @mention is (``tusk.text.markdown``); no other module of the
product matches mentions itself, or the poller, the MCP policy and the write-up drift
apart again (three grammars once did, and disagreed)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "tusk"
GRAMMAR = "text/markdown.py"
# Patterns with an "@" that match no mention, by (module, name): what each matches.
NOT_MENTIONS = {
    ("cli/tusk_ref.py", "TUSK_REF"): "a `uses:` reference, owner/repo@ref",
    ("cli/doctor.py", "REUSABLE_CALL"): "a `uses:` line calling a reusable workflow",
    ("sandbox/act_runner.py", "_THIRD_PARTY"): "a `uses:` line of a third-party action",
    ("text/render.py", "_PLAIN_LINE"): "a line holding no '@' at all (nothing to neutralise)",
}
_RE_FUNCTIONS = frozenset(
    {"compile", "search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split"}
)


def _literal(node: ast.AST) -> str:
    """The literal text of an expression that builds a pattern (constants, +, f-strings)."""
    return "".join(
        part.value
        for part in ast.walk(node)
        if isinstance(part, ast.Constant) and isinstance(part.value, str)
    )


def mention_patterns(source: str) -> list[tuple[int, str]]:
    """(line, assigned name) of each regular expression whose literal text holds an "@"."""
    tree = ast.parse(source)
    assigned: dict[int, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            for inner in ast.walk(node.value):
                assigned[id(inner)] = node.targets[0].id
    return sorted(
        (node.lineno, assigned.get(id(node), ""))
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "re"
        and node.func.attr in _RE_FUNCTIONS
        and node.args
        and "@" in _literal(node.args[0])
    )


def test_no_module_but_the_markdown_module_matches_mentions() -> None:
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        relative = path.relative_to(SRC).as_posix()
        if relative == GRAMMAR:
            continue
        for line, name in mention_patterns(path.read_text(encoding="utf-8")):
            if (relative, name) not in NOT_MENTIONS:
                offenders.append(f"{relative}:{line}")
    assert offenders == [], (
        "these modules match @mentions themselves; use tusk.text.markdown "
        "(NOTIFIES or TRIGGERS) instead: " + ", ".join(offenders)
    )


def test_the_guard_finds_a_module_that_matches_mentions() -> None:
    """The check itself can fail: each way the old grammars were written is found."""
    rogue = (
        'import re\nA = re.compile(r"(?<![A-Za-z0-9])@([A-Za-z0-9-]+)")\n'
        'def f(bot):\n    return re.compile(r"(?<!x)" + "@" + re.escape(bot))\n'
        'B = re.sub(rf"@{1}", "", "")\n'
    )
    assert [line for line, _ in mention_patterns(rogue)] == [2, 4, 5]


def test_each_exception_still_exists_and_matches_no_mention() -> None:
    for (relative, name), what in NOT_MENTIONS.items():
        found = mention_patterns((SRC / relative).read_text(encoding="utf-8"))
        assert name in {n for _, n in found}, f"{relative}: {name} ({what}) is gone"
