"""The JSON Schemas of commscope's machine-readable outputs (docs/schemas.md).

Every `--json` output is an object whose `schema` field names the schema it follows,
`urn:commscope:NAME:VERSION`, kept here as NAME.VERSION.json. A published version never
changes: a change to an output is a new version (tests/test_schemas.py holds every
published file's hash and fails when one changes). The export formats that belong to other
tools (Bencher's BMF, github-action-benchmark's JSON) carry no such field, since their
readers reject unknown keys; their schemas are here too, named in docs/schemas.md.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
# The version each output is written in now.
CURRENT = {"cases": 4, "app": 3, "runs": 2, "imported": 2, "export": 3, "fit": 3,
           "predict": 1, "compare": 3, "check": 5, "health": 5, "screen": 2, "tune": 1,
           "tune-verify": 3, "claim": 1, "probe": 1, "info": 1, "studies": 1, "bmf": 1,
           "gab": 1, "skew": 2, "congestion": 2, "tune-late": 1, "profile": 2,
           "predict-profile": 2, "compare-live": 1, "history": 2, "watch": 1}


def ident(name: str, version: int | None = None) -> str:
    return f"urn:commscope:{name}:{CURRENT[name] if version is None else version}"


def tagged(name: str, body: dict) -> dict:
    """`body` as the output of schema `name` at its current version."""
    return {"schema": ident(name), **body}


def path(schema_id: str) -> Path:
    """The file of `urn:commscope:NAME:VERSION`."""
    _, _, name, version = schema_id.split(":")
    return HERE / f"{name}.{version}.json"


def load(schema_id: str) -> dict:
    return json.loads(path(schema_id).read_text())
