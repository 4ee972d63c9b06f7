"""The published JSON Schemas (src/commscope/views/schemas, docs/schemas.md): each a valid schema
whose $id is its file, never changed once published, and strict enough that an output
changed without a new schema fails to validate. Every `--json` output of the suite is
validated against the schema it names by conftest.commscope."""

from __future__ import annotations

import copy
import hashlib
import json
import re
from pathlib import Path

import jsonschema
import pytest

from commscope.views import schemas
from conftest import commscope, validator
from fakempi.inprocess import FakeLauncher

# sha256 of every published schema file. A published file never changes: a change to an
# output is a new file NAME.(N+1).json, a new line here and schemas.CURRENT moved on.
LOCK = Path(__file__).parent / "data" / "schemas.lock"
PUBLISHED = sorted(schemas.HERE.glob("*.json"))


def _hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_every_schema_is_valid_and_named_by_its_file():
    assert PUBLISHED
    for path in PUBLISHED:
        schema = json.loads(path.read_text())
        jsonschema.Draft202012Validator.check_schema(schema)
        name, version = re.fullmatch(r"(.+)\.(\d+)\.json", path.name).groups()
        assert schema["$id"] == f"urn:commscope:{name}:{version}"
        assert schemas.path(schema["$id"]) == path


def test_current_versions_are_the_newest_published():
    newest = {}
    for path in PUBLISHED:
        name, version = path.name.rsplit(".", 2)[:2]
        newest[name] = max(newest.get(name, 0), int(version))
    assert {n: v for n, v in newest.items() if n != "case"} == schemas.CURRENT


def test_a_published_schema_never_changes():
    locked = dict(line.split()[::-1] for line in LOCK.read_text().splitlines() if line.strip())
    for path in PUBLISHED:
        assert path.name in locked, (f"{path.name} is not in {LOCK.name}: add its sha256 "
                                     "once it is published")
        assert _hash(path) == locked[path.name], (
            f"{path.name} changed after it was published: restore it and publish the change "
            "as the next version (docs/schemas.md)")
    assert sorted(locked) == [p.name for p in PUBLISHED], "a published schema was removed"


@pytest.fixture(scope="module")
def shown(tmp_path_factory, fake_mpi) -> dict:
    db = tmp_path_factory.mktemp("schemas") / "r.db"
    done = commscope("run", "bw", "--sizes", "8,1K", "--iters", "6", "--db", db, "--mpi",
                     fake_mpi, launcher=FakeLauncher())
    assert done.returncode == 0, done.stderr
    return json.loads(commscope("results", "show", "1", "--json", "--db", db).stdout)


@pytest.mark.parametrize("change", ["add a field", "drop a field", "retype a field",
                                    "add a top-level field", "rename the schema"])
def test_an_output_changed_without_a_new_schema_fails(shown, change):
    check = validator(shown["schema"])
    check.validate(shown)
    out = copy.deepcopy(shown)
    case = out["cases"][0]
    if change == "add a field":
        case["median_us"] = case["median_s"] * 1e6
    elif change == "drop a field":
        del case["ci_high_s"]
    elif change == "retype a field":
        case["bytes"] = str(case["bytes"])
    elif change == "add a top-level field":
        out["host"] = "n01"
    else:
        out["schema"] = "urn:commscope:cases:1"
    assert not check.is_valid(out)
