"""build-context's step edge: the document validated from its bytes with the collector
paused, and the trigger found among many comments by its id as GitHub spells it."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from bc_samples import comment, issue_document

from tusk.contracts.models import ContextDocument
from tusk.contracts.raw_context import Comment
from tusk.errors import InputError
from tusk.steps.build_context import main as step
from tusk.steps.build_context.items import index_of, is_node


def test_the_document_is_validated_with_the_collector_paused_and_it_runs_again_after(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    doc = issue_document([comment(1, "hello")])
    seen: list[bool] = []
    real = ContextDocument.model_validate_json

    def watched(data: bytes) -> ContextDocument:
        seen.append(gc.isenabled())
        return real(data)

    monkeypatch.setattr(ContextDocument, "model_validate_json", watched)
    assert gc.isenabled()
    assert step.parse_context(doc.model_dump_json().encode(), tmp_path / "c.json") == doc
    with pytest.raises(InputError, match="is not a Tusk context document"):
        step.parse_context(b'{"jobid": 1}', tmp_path / "c.json")
    assert seen == [False, False]
    assert gc.isenabled()


def test_a_paused_collector_stays_paused_when_it_was_before() -> None:
    gc.disable()
    try:
        with step.collection_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_trigger_is_found_by_its_rest_id_or_node_id_spelled_exactly() -> None:
    nodes = [
        Comment(id=7, node_id="IC_a"),
        Comment(id=None, node_id="IC_b"),
        Comment(id=70, node_id=None),
    ]
    assert index_of(nodes, "7") == 0
    assert index_of(nodes, "IC_b") == 1
    assert index_of(nodes, "70") == 2
    for spelling in ("007", "+7", " 7", "7.0", "٧"):  # int() takes these; GitHub's id is "7"
        assert index_of(nodes, spelling) is None
        assert not is_node(nodes[0], spelling)
    assert index_of(nodes, "None") is None


def test_the_whole_step_runs_with_the_collector_paused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # One step per process: what it reads and builds lives until it ends, so the
    # collector is paused from reading the document to the last file written.
    import argparse
    import types

    seen: dict[str, bool] = {}

    def reading(path: Path) -> object:
        seen["read"] = gc.isenabled()
        return types.SimpleNamespace(jobid="job-1")

    def building(*args: object, **kwargs: object) -> dict[str, str | bool | int]:
        seen["build"] = gc.isenabled()
        return {}

    inputs = types.SimpleNamespace(
        config="tusk.yml", context_file="c.json", output_dir="out", artifact_name=""
    )
    monkeypatch.setattr(step.Inputs, "from_args", classmethod(lambda cls, args: inputs))
    monkeypatch.setattr(step, "resolve_config_path", lambda value: value)
    monkeypatch.setattr(step, "load_settings", lambda path: None)
    monkeypatch.setattr(step, "load_secrets", lambda: None)
    monkeypatch.setattr(step, "gateway_from_secrets", lambda secrets, role: None)
    monkeypatch.setattr(step, "read_context", reading)
    monkeypatch.setattr(step, "build_and_claim", building)
    monkeypatch.setattr(step.actions_edge, "set_outputs", lambda outputs: None)
    assert step.run(argparse.Namespace(run_url="u")) == 0
    assert seen == {"read": False, "build": False}
    assert gc.isenabled()
