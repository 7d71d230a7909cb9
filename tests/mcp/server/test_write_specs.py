"""One entry per write tool: each write's catalog entry holds its spec, every spec
field is given, the gate reads the spec (a new write needs no change to the policy),
nothing outside the MCP server reads a spec (a step reads the audit record), and no
product module compares write-tool names outside the catalog."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from tests.mcp.gate.test_policy import config, refusal_code
from tusk.audit.chain import AuditLog, read_records
from tusk.mcp.gate import policy, specs
from tusk.mcp.gate.policy import RunState
from tusk.mcp.gate.recorder import kind_of
from tusk.mcp.gate.specs import WriteSpec, message_tools, write_specs
from tusk.mcp.server.catalog import DISCUSSION_WRITE, READS, WRITES
from tusk.steps.run_claude.session.continues import messages_left

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "src" / "tusk"
WRITE_NAMES = frozenset(write_specs())
# The only module that may name a write tool in a decision: the catalog, where each
# write's spec is written (the tools' own functions name themselves, never compare).
ALLOWED = {"mcp/server/catalog.py"}
STATE_KINDS = frozenset({"history", "memory"})
# Optional fields: the rest must be given by every entry.
OPTIONAL = {"checked_args", "survives_go_away"}


def test_every_write_in_the_catalog_carries_its_spec_and_every_spec_a_tool() -> None:
    catalog = (*WRITES, DISCUSSION_WRITE)
    assert all(tool.spec is not None and write_specs()[tool.name] is tool.spec for tool in catalog)
    assert {tool.name for tool in catalog} == WRITE_NAMES
    assert all(tool.spec is None for tool in READS)
    assert {kind_of(tool.name) for tool in catalog} == {"write"}
    assert {kind_of(tool.name) for tool in READS} == {"read"}


def test_a_spec_field_cannot_be_left_out() -> None:
    required = {f.name for f in dataclasses.fields(WriteSpec)} - OPTIONAL
    assert all(
        f.default is dataclasses.MISSING
        for f in dataclasses.fields(WriteSpec)
        if f.name in required
    )
    with pytest.raises(TypeError):
        WriteSpec("issue", "repo_arg", None)  # type: ignore[call-arg]


def test_the_self_check_counts_the_messages_the_specs_name(tmp_path: Path) -> None:
    assert message_tools() == {
        "create_comment",
        "create_issue",
        "create_pull_request",
        "create_discussion_comment",
    }
    # The self-check reads what each staged record says it would make, not a tool list.
    log = AuditLog(tmp_path / "audit.jsonl")
    for name, spec in write_specs().items():
        log.append(
            tool=name,
            kind="write",
            target="a/b#1",
            args={"tool": name},
            decision="staged",
            created=spec.creates,
        )
    assert messages_left(read_records(tmp_path / "audit.jsonl")) == len(message_tools())


def test_nothing_outside_the_mcp_server_reads_a_write_spec() -> None:
    readers = [
        path.relative_to(PACKAGE).as_posix()
        for path in sorted(PACKAGE.rglob("*.py"))
        if "mcp.gate.specs" in path.read_text(encoding="utf-8")
        or "gate import specs" in path.read_text(encoding="utf-8")
    ]
    assert readers and all(path.startswith("mcp/") for path in readers)


def test_a_new_write_is_gated_by_its_spec_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """A write the policy has never heard of, given a spec like create_issue's, is
    scoped, permitted and limited like it: the gate reads the spec, not the name."""
    spec = specs.write_spec("create_issue")
    monkeypatch.setattr(specs, "_BY_NAME", {**specs._BY_NAME, "open_ticket": spec})
    cfg, state = config(), RunState()
    first = {"repo": "alice/widgets", "title": "t", "body": "b"}
    assert refusal_code("open_ticket", first, cfg, state) is None
    policy.record_write("open_ticket", first, cfg, state)
    assert state.issues["alice/widgets"] == 1 and state.writes == 1
    second = {**first, "title": "another"}
    assert refusal_code("open_ticket", second, cfg, state) == "LIMIT_EXCEEDED"
    assert refusal_code("open_ticket", {**first, "repo": "mallory/x"}, cfg, RunState()) == (
        "OUT_OF_SCOPE"
    )
    assert policy.target_label("open_ticket", first, cfg) == "alice/widgets"


def _compares_a_write_name(node: ast.AST) -> bool:
    """``tool == "create_issue"``, ``op.tool in ("history", "memory")`` and the like: a
    comparison of something named like a tool with a write tool's name."""
    if not isinstance(node, ast.Compare):
        return False
    sides = [node.left, *node.comparators]
    named = any("tool" in ast.unparse(side).lower() for side in sides)
    constants = {
        c.value
        for side in sides
        for c in ast.walk(side)
        if isinstance(c, ast.Constant) and isinstance(c.value, str)
    }
    return named and bool(constants & WRITE_NAMES)


def _names_write_set(node: ast.AST) -> bool:
    """A literal set, tuple or list of two write tools or more (a list of writes kept
    apart from the specs). ``history`` and ``memory`` alone are the state issues' kinds."""
    if not isinstance(node, ast.Set | ast.Tuple | ast.List):
        return False
    names = {e.value for e in node.elts if isinstance(e, ast.Constant)} & WRITE_NAMES
    return len(names) >= 2 and bool(names - STATE_KINDS)


# A write's model names the tool as surely as its name: ``isinstance(args, PushBranch)``
# or ``tool.args is PushBranch`` special-cases it just the same.
WRITE_MODELS = frozenset(tool.args.__name__ for tool in (*WRITES, DISCUSSION_WRITE))


def _tests_a_write_model(node: ast.AST) -> bool:
    if isinstance(node, ast.Call) and ast.unparse(node.func) == "isinstance":
        checked = node.args[1:] if len(node.args) > 1 else []
    elif isinstance(node, ast.Compare) and any(
        isinstance(op, ast.Is | ast.IsNot | ast.Eq | ast.NotEq) for op in node.ops
    ):
        checked = [node.left, *node.comparators]
    else:
        return False
    named = {n.id for side in checked for n in ast.walk(side) if isinstance(n, ast.Name)}
    named |= {n.attr for side in checked for n in ast.walk(side) if isinstance(n, ast.Attribute)}
    return bool(named & WRITE_MODELS)


def write_name_decisions(package: Path = PACKAGE) -> list[str]:
    found = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package).as_posix()
        if relative in ALLOWED or relative.startswith("sandbox/"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if _compares_a_write_name(node) or _names_write_set(node) or _tests_a_write_model(node):
                found.append(f"{relative}:{getattr(node, 'lineno', 0)}")
    return found


def test_no_product_module_compares_write_tool_names() -> None:
    assert write_name_decisions() == []


def test_the_check_finds_a_comparison_of_write_names(tmp_path: Path) -> None:
    (tmp_path / "x.py").write_text(
        'if op.tool == "push_branch":\n    pass\n'
        'MESSAGE = frozenset({"create_comment", "create_issue"})\n'
        'if kind == "memory":\n    pass\n'
        "if isinstance(args, PushBranch):\n    pass\n"
        "if tool.args is PushBranch:\n    pass\n",
        encoding="utf-8",
    )
    assert sorted(write_name_decisions(tmp_path)) == ["x.py:1", "x.py:3", "x.py:6", "x.py:8"]
