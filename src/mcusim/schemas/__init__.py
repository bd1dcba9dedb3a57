"""The JSON Schemas of a result bundle, shipped with the package: run.schema.json (run.json) and
csv.schema.json (a row of each CSV file, cells parsed by their column's type). SCHEMA_VERSION is
run.json's `schema_version`; docs/bundle.md gives the rule for what bumps it."""
from __future__ import annotations

import csv
import json
from functools import cache
from importlib import resources
from pathlib import Path

SCHEMA_VERSION = "1.4"


@cache
def load(name: str) -> dict:
    """A shipped schema: "run" or "csv"."""
    return json.loads(resources.files(__package__).joinpath(f"{name}.schema.json").read_text())


def csv_rows(path: str | Path, file_name: str | None = None) -> list[dict]:
    """The rows of a bundle CSV, each cell parsed by its column's type in csv.schema.json."""
    row_schema = load("csv")["$defs"][file_name or Path(path).name]
    with open(path, newline="") as stream:
        return [{column: _cell(value, _column_type(row_schema, column)) for column, value in row.items()}
                for row in csv.DictReader(stream)]


def _column_type(row_schema: dict, column: str) -> dict:
    if column in row_schema["properties"]:
        return row_schema["properties"][column]
    import re

    for pattern, kind in row_schema.get("patternProperties", {}).items():
        if re.search(pattern, column):
            return kind
    return {}


def _cell(value: str | None, kind: dict):
    types = kind.get("type", "string")
    types = [types] if isinstance(types, str) else types
    if value in (None, "") and "null" in types:
        return None
    if "object" in types:
        return json.loads(value)
    if "integer" in types:
        return int(value)
    if "number" in types:
        return float(value)
    if "boolean" in types:
        return value in ("True", "true")
    return value
