"""JSON Schemas of the contracts and of ``tusk.yml``, exported for users.

``python -m tusk.contracts.schemas`` rewrites ``docs/schemas/``; ``--check`` only
reports which files are stale (a test runs the same check).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from tusk.contracts.config import Settings
from tusk.contracts.models import CONTRACT_MODELS, TrustLevel, TrustSource

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
DEFAULT_DIR = Path(__file__).resolve().parents[3] / "docs" / "schemas"
SUFFIX = ".schema.json"


def all_schemas() -> dict[str, dict[str, Any]]:
    """Every exported schema by file stem: each contract, tusk.yml, the trust level and source."""
    schemas: dict[str, dict[str, Any]] = {
        name: model.model_json_schema() for name, model in CONTRACT_MODELS.items()
    }
    schemas["settings"] = Settings.model_json_schema()
    schemas["trust-level"] = {"title": "TrustLevel", **TypeAdapter(TrustLevel).json_schema()}
    schemas["trust-source"] = {"title": "TrustSource", **TypeAdapter(TrustSource).json_schema()}
    return {name: {"$schema": JSON_SCHEMA_DIALECT, **schema} for name, schema in schemas.items()}


def schema_text(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def expected_files() -> dict[str, str]:
    return {name + SUFFIX: schema_text(schema) for name, schema in all_schemas().items()}


def stale_files(directory: Path) -> list[str]:
    """Names of schema files that are missing, out of date, or no longer exported."""
    expected = expected_files()
    stale = [
        name
        for name, text in expected.items()
        if not (directory / name).is_file() or (directory / name).read_text("utf-8") != text
    ]
    stale += [p.name for p in directory.glob("*" + SUFFIX) if p.name not in expected]
    return sorted(stale)


def write_schemas(directory: Path) -> list[str]:
    """Rewrite ``directory`` to hold exactly the exported schemas; return what changed."""
    changed = stale_files(directory)
    directory.mkdir(parents=True, exist_ok=True)
    expected = expected_files()
    for name in changed:
        path = directory / name
        if name in expected:
            path.write_text(expected[name], encoding="utf-8")
        else:
            path.unlink()
    return changed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tusk.contracts.schemas", description=__doc__)
    parser.add_argument("directory", nargs="?", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--check", action="store_true", help="only report stale files")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_files(args.directory)
        for name in stale:
            print(f"stale: {args.directory / name}", file=sys.stderr)
        if stale:
            print("Run `python -m tusk.contracts.schemas` to rewrite them.", file=sys.stderr)
        return 1 if stale else 0
    for name in write_schemas(args.directory):
        print(f"wrote {args.directory / name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
