"""Exported JSON Schemas: present for every contract and tusk.yml, and never stale."""

from __future__ import annotations

import json
from pathlib import Path

from tusk.contracts import schemas
from tusk.contracts.models import CONTRACT_MODELS

DOCS = Path(__file__).resolve().parents[2] / "docs" / "schemas"


def test_committed_schemas_are_up_to_date() -> None:
    stale = schemas.stale_files(DOCS)
    assert stale == [], f"stale JSON Schemas {stale}: run `python -m tusk.contracts.schemas`"


def test_every_contract_settings_and_trust_level_and_source_are_exported() -> None:
    names = set(schemas.expected_files())
    wanted = {f"{name}.schema.json" for name in CONTRACT_MODELS}
    extra = {"settings.schema.json", "trust-level.schema.json", "trust-source.schema.json"}
    assert wanted | extra == names
    trust = json.loads((DOCS / "trust-level.schema.json").read_text("utf-8"))
    assert trust["enum"] == ["owner", "collaborator", "external"]
    source = json.loads((DOCS / "trust-source.schema.json").read_text("utf-8"))
    assert source["enum"] == [
        "repository_owner",
        "permission_endpoint",
        "author_association",
        "none",
    ]


def test_check_flags_a_changed_missing_or_orphaned_file(tmp_path: Path) -> None:
    assert schemas.main([str(tmp_path)]) == 0
    assert schemas.main(["--check", str(tmp_path)]) == 0
    (tmp_path / "shard.schema.json").write_text("{}\n", encoding="utf-8")
    (tmp_path / "blocklist.schema.json").unlink()
    (tmp_path / "old-model.schema.json").write_text("{}\n", encoding="utf-8")
    assert schemas.stale_files(tmp_path) == [
        "blocklist.schema.json",
        "old-model.schema.json",
        "shard.schema.json",
    ]
    assert schemas.main(["--check", str(tmp_path)]) == 1
    assert schemas.main([str(tmp_path)]) == 0
    assert schemas.stale_files(tmp_path) == []
    assert not (tmp_path / "old-model.schema.json").exists()
