"""Golden outputs: what `results`, `fit`, `compare`, `predict` and `report` print for a fixed
results file (tests/golden/store.sql, a schema-3 store of real runs on Open MPI, migrated
when opened, with a memcpy ceiling stored for its runs as a run now stores one).

A change to any of these outputs shows here as a diff against tests/golden/*.txt. Where a
change is meant, regenerate the files with COMMSCOPE_UPDATE_GOLDEN=1 and review the diff.
The report is compared with its figures' PNG data and its render-time facts (when it was
made, the results file's path) replaced by placeholders.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from pathlib import Path

import pytest

from commscope.store.store import Store

from conftest import commscope

GOLDEN = Path(__file__).parent / "golden"
APPLICATION_ID = 0x436F6D53  # "ComS"
FIXTURE_SCHEMA = 3  # the schema store.sql was dumped from
CEILING = {"host": "vm", "memcpy": {"bytes_per_s": 7.0e9, "buffer_bytes": 64 * 2**20,
                                    "repeats": 7, "min_bytes_per_s": 6.5e9,
                                    "max_bytes_per_s": 7.4e9, "method": "numpy.copyto"}}

COMMANDS = {
    "results_list": ["results", "list"],
    "results_show_pingpong": ["results", "show", "1"],
    "results_show_fanin": ["results", "show", "5"],
    "results_show_window": ["results", "show", "10"],
    "results_export_allreduce_csv": ["results", "export", "8", "--csv"],
    "fit_pingpong": ["fit", "1"],
    "fit_pingpong_json": ["fit", "1", "--json"],
    "fit_pingping": ["fit", "4"],
    "compare_runs": ["compare", "1", "2", "--all"],
    "compare_runs_json": ["compare", "1", "2", "--json"],
    "compare_sweep": ["compare", "sweep:1", "1", "--all"],
    "predict_ring": ["predict", "ring", "--from", "4", "--compare", "6", "7"],
}


@pytest.fixture(scope="module")
def fixed_db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("golden") / "fixed.db"
    con = sqlite3.connect(path)
    con.executescript((GOLDEN / "store.sql").read_text())
    con.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    con.execute(f"PRAGMA user_version = {FIXTURE_SCHEMA}")
    con.commit()
    con.close()
    Store(path).db.execute("UPDATE runs SET host_facts = ?", (json.dumps(CEILING),))
    return path


def twelve_digits(text: str) -> str:
    """Every decimal fraction to 12 significant digits: JSON prints floats in full, and
    their last digits move with numpy's summation order between releases (2.4 moved a
    median by 1 unit in the 16th digit)."""
    return re.sub(r"-?\d+\.\d+(?:e[-+]?\d+)?", lambda m: f"{float(m[0]):.12g}", text)


def check(name: str, text: str) -> None:
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("COMMSCOPE_UPDATE_GOLDEN"):
        path.write_text(text)
    assert twelve_digits(text) == twelve_digits(path.read_text()), \
        f"{name}: output differs from {path}"


@pytest.mark.parametrize("name", COMMANDS)
def test_verb_output_is_unchanged(name, fixed_db):
    done = commscope(*COMMANDS[name], "--db", fixed_db)
    assert done.returncode in (0, 1, 3), done.stderr
    check(name, f"exit {done.returncode}\n{done.stdout}")


def normalized_report(html: str, db: Path) -> str:
    html = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "data:image/png;base64,PNG", html)
    html = re.sub(r"made \d{4}-\d\d-\d\dT[\d:]+\+00:00", "made TIME", html)
    return html.replace(str(db), "DB")


def test_report_is_unchanged(fixed_db, tmp_path):
    out = tmp_path / "report.html"
    done = commscope("report", "1-13", "-o", out, "--db", fixed_db)
    assert done.returncode == 0, done.stderr
    check("report", normalized_report(out.read_text(), fixed_db))
