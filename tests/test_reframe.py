"""docs/examples/reframe_commscope.py runs under ReFrame, installed from the package index
(the `test` extras), and ReFrame's report carries the figures commscope stored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EMBEDDED, commscope

EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"
BIN = Path(sys.executable).parent  # the venv's reframe and commscope


@pytest.mark.mpi
def test_reframe_check_reports_the_stored_medians(tmp_path):
    # Open MPI alone: ReFrame reads what commscope stored, the same from either library
    mpi_prefix = EMBEDDED
    db, report = tmp_path / "results.db", tmp_path / "report.json"
    # A reference far above any latency: this checks that the figures arrive and are
    # judged, not how fast this shared machine is today.
    done = subprocess.run(
        [BIN / "reframe", "-C", EXAMPLES / "reframe_settings.py",
         "-c", EXAMPLES / "reframe_commscope.py", "-r", "--prefix", tmp_path / "rfm",
         "--report-file", report, "-S", f"commscope={BIN / 'commscope'}", "-S", f"db={db}",
         "-S", f"mpi={mpi_prefix}", "-S", "launches=3", "-S", "latency_us=1000"],
        cwd=tmp_path, env={**os.environ, "TMPDIR": str(tmp_path)},  # ReFrame's first log
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr

    session = json.loads(report.read_text())
    assert session["session_info"]["num_failures"] == 0
    (case,) = session["runs"][0]["testcases"]
    assert case["result"] == "pass"
    perf = case["perfvalues"]
    assert set(perf) == {"local:default:latency", "local:default:latency_ci_high"}

    shown = commscope("results", "show", "1", "--json", "--db", db)
    assert shown.returncode == 0, shown.stderr
    smallest = min(json.loads(shown.stdout)["cases"], key=lambda c: c["bytes"])
    assert smallest["bytes"] == 8
    median, reference, lower, upper, unit, verdict = perf["local:default:latency"]
    assert median == pytest.approx(smallest["median_s"] * 1e6, rel=1e-12)
    assert (reference, lower, upper, unit, verdict) == (1000.0, None, 0.5, "us", "pass")
    high, *_, unit, verdict = perf["local:default:latency_ci_high"]
    assert high == pytest.approx(smallest["ci_high_s"] * 1e6, rel=1e-12)
    assert (unit, verdict) == ("us", "pass")
    assert high >= median
