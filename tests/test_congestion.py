"""`commscope congestion` (congestion.py): the layout that puts each aggressor group across
the canaries' path, the congestion impact factor recovered from the fake launcher's known
truth (tests/fakempi/native.py: each group slows a canary by half its time alone), its
JSON, and bad input refused before anything runs or is stored; the p99 CIF's interval
and `no bottleneck reached` on seeded simulated launches of known truth (the figures at
more checks: bench/congestion.py, docs/statistics.md "Congestion")."""

from __future__ import annotations

import argparse
import json
import math
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import commscope, one_line_error, validator
from fakempi.inprocess import FakeLauncher
from fakempi.native import AGGRESSOR_BPS, CIF_PER_GROUP

from commscope.judge import congestion
from commscope.stats.stats import harrell_davis, harrell_davis_min_samples
from commscope.stats.verdict import INCONCLUSIVE, UNDETERMINED, parse_threshold
from commscope.views.congestion import as_json, table

THRESHOLD = parse_threshold("10%")
BENCH = Path(__file__).resolve().parent.parent / "bench" / "congestion.py"

HOSTS = "a,b,c,d,e,f"


def ranks_on(layout: congestion.Layout) -> list[str]:
    return [h for item in layout.spec.split(",") for h in [item.split(":")[0]]
            * int(item.split(":")[1])]


@pytest.mark.parametrize("pattern, groups, group", [("bw", 3, 2), ("incast", 2, 3),
                                                    ("bcast", 2, 3), ("alltoall", 2, 4)])
def test_each_group_crosses_from_the_near_side_to_the_far(pattern, groups, group):
    """The kernel's member m of group j is rank 2 + m * groups + j: every group has ranks on
    both sides, and a sender's side is the canary sender's (bw: even members send; incast:
    all send to member 0; bcast: member 0 sends)."""
    where = congestion.layout(("a", "f"), ["b", "c"], ["d", "e"], pattern, groups, group,
                              False)
    on = ranks_on(where)
    assert on[:2] == ["a", "f"] and len(on) == where.ranks == 2 + groups * group
    for j in range(groups):
        members = [on[2 + m * groups + j] for m in range(group)]
        far = [congestion.FAR[pattern](m, group) for m in range(group)]
        assert all((h in ("d", "e")) == f for h, f in zip(members, far)), members
    placebo = congestion.layout(("a", "f"), ["b", "c"], ["d", "e"], pattern, groups, group,
                                True)
    assert set(ranks_on(placebo)[2:]) == {"b", "c"}  # kept among the near hosts


def congested(fake_mpi, db, *args):
    done = commscope("congestion", "--hosts", HOSTS, *args, "--json", "--mpi", fake_mpi,
                     "--db", db, launcher=FakeLauncher())
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    validator("urn:commscope:congestion:2").validate(found)
    return found


@pytest.mark.parametrize("groups", [1, 2])
def test_the_factor_is_the_truth_with_its_interval(fake_mpi, tmp_path, groups):
    found = congested(fake_mpi, tmp_path / "r.db", "--aggressors", str(groups))
    truth = 1 + CIF_PER_GROUP * groups
    assert [c["canary"] for c in found["canaries"]] == ["pingpong", "bw", "allreduce"]
    for c in found["canaries"]:
        low, high = c["cif_median_ci"]  # each phase's samples draw noise of their own
        assert c["cif_median"] == pytest.approx(truth, rel=0.01) and high / low < 1.1, c
        assert low <= c["cif_median"] <= high
        assert c["verdict"] == "congested" and c["launches"] == 5
        # every canary, bw too (30 before), takes the samples a p99 needs
        assert c["p99_samples"] == congestion.P99_SAMPLES == 100
        assert c["cif_p99"] == pytest.approx(truth, rel=0.05), c
        assert c["cif_p99_verdict"] == "congested"
    assert found["margin"] == pytest.approx([0.9, 1 / 0.9])
    load = found["load"]
    assert load["alone_Bps"] == pytest.approx(AGGRESSOR_BPS * groups, rel=0.05)
    assert load["verdict"] == "aggressors at their own rate"


def test_the_canaries_and_their_sides_are_recorded(fake_mpi, tmp_path):
    db = tmp_path / "r.db"
    found = congested(fake_mpi, db, "--canary", "bw:64KiB", "--canary-hosts", "a,b",
                      "--aggressors-near", "c", "--aggressors-far", "d,e,f")
    assert found["hosts"] == "a:1,b:1,c:1,d:1" and found["canary_hosts"] == ["a", "b"]
    runs = sqlite3.connect(db).execute("SELECT kernel, settings FROM runs").fetchall()
    assert [k for k, _ in runs] == ["congestion", "congestion"]  # the canary's, the alone
    each = [json.loads(s)["each"]["aggressor"] for _, s in runs]
    assert each == [["none", "bw"], ["bw"]]


def launches(rng, count: int, samples: int, cif: float, cif_sd: float,
             tail: str = "none") -> tuple[dict, dict]:
    """A canary's phases in `count` launches: lognormal samples (sigma 0.1, median 1) times
    a launch effect both share; the congested phase's further times the launch's CIF, cif
    exp(N(0, cif_sd^2)), and, with `tail` pareto, a Pareto tail of alpha 2 (median 1) in
    place of the isolated shape."""
    isolated, congested = {}, {}
    for k in range(count):
        scale = math.exp(rng.normal(0, 0.1))
        isolated[k] = scale * np.exp(rng.normal(0, 0.1, samples))
        shape = (1 - rng.random(samples)) ** -0.5 / math.sqrt(2) if tail == "pareto" \
            else np.exp(rng.normal(0, 0.1, samples))
        congested[k] = scale * cif * math.exp(rng.normal(0, cif_sd)) * shape
    return isolated, congested


def judged(isolated, congested, loaded=True) -> congestion.Canary:
    return congestion.cif(isolated, congested, "pingpong", 8, THRESHOLD, loaded)


def test_the_p99_cif_interval_covers_the_truth_at_ten_launches():
    """A congested phase with a Pareto tail (alpha 2: its p99 10/sqrt(2) times its median)
    in 10 launches of 100 samples, CIF 1.25: the p99 CIF's 95% interval covers the truth
    in 188 of 200 seeded checks (bench/congestion.py: 95.3% of 1000). numpy's
    interpolated percentile, nearly the largest of 100, read low by half a launch's spread
    of it, and its interval, narrowed by the launches round that, covered 139 (70%)."""
    rng = np.random.default_rng(496)
    truth = 1.25 * (10 / math.sqrt(2)) / math.exp(0.1 * 2.3263478740408408)
    covered = 0
    for _ in range(200):
        low, high = judged(*launches(rng, 10, 100, 1.25, 0.1, "pareto")).p99.interval
        covered += low <= truth <= high
    assert covered >= 180, covered


def test_a_launch_of_too_few_samples_gives_no_p99_rather_than_its_largest():
    """Below 99 samples a phase's p99 is its largest sample or less (the p97 of 30 on
    average): the p99 CIF is not estimable, the median's still judged; JSON writes null
    (congestion:2) and the table a dash with the reason."""
    isolated, congested = launches(np.random.default_rng(1), 5, 30, 1.5, 0.05)
    canary = judged(isolated, congested)
    assert not canary.p99_estimable and canary.p99_samples == 30
    assert canary.p99.word == INCONCLUSIVE and canary.p99.interval is None
    assert math.isnan(canary.p99.ratio)
    assert canary.verdict == "congested" and canary.median.interval is not None
    found = congestion.Judged([canary], congestion.unmeasured("aggressor load", "aggressors"),
                              1e6, 1e6, 5, THRESHOLD)
    where = congestion.layout(("a", "f"), ["b"], ["c"], "bw", 1, 2, False)
    args = argparse.Namespace(aggressor="bw", aggressors=1, group=2, placebo=False)
    out = {"schema": "urn:commscope:congestion:2", **as_json(found, where, args)}
    validator("urn:commscope:congestion:2").validate(out)
    assert out["canaries"][0]["cif_p99"] is None and out["canaries"][0]["p99_samples"] == 30
    text = table(found, "t").text()
    assert "CIF p99 -: not estimable from 30 samples a phase; the p99 needs 99" in text
    row = next(line for line in text.splitlines() if line.startswith("pingpong"))
    assert re.split(r"\s{2,}", row.strip())[3:] == ["-", "-", "congested"], row


def test_no_bottleneck_needs_the_cif_within_the_threshold_both_ways():
    """Equivalence by two one-sided tests (Schuirmann 1987) at the threshold's margin,
    0.9-1.11x: launches of 1.00 +- 2% are `no bottleneck reached` (beside aggressors at
    their own rate; `no slowdown` where they were held back); 0.80, 1.30 and 1.00 hold 1
    in an interval far wider than the margin: `undetermined`, which the rule of an
    interval holding 1 called `no bottleneck reached`."""
    ones = np.ones(100)
    close = ({k: ones for k in range(5)},
             {k: ones * r for k, r in enumerate([1.01, 0.99, 1.0, 1.02, 0.98])})
    assert judged(*close).verdict == congestion.NO_BOTTLENECK
    assert judged(*close, loaded=False).verdict == "no slowdown"
    wide = ({k: ones for k in range(3)}, {k: ones * r for k, r in enumerate([0.8, 1.3, 1.0])})
    canary = judged(*wide)
    assert canary.median.interval[0] < 1 < canary.median.interval[1]
    assert canary.verdict == UNDETERMINED


def test_a_cif_of_one_and_a_quarter_is_almost_never_no_bottleneck():
    """A true 1.25x CIF varying between launches (sd 0.2 on the log) in 3 launches: `no
    bottleneck reached` in none of 200 seeded checks (at most 5% by the two one-sided
    tests); an interval that held 1 gave it in 161 (80%)."""
    rng = np.random.default_rng(497)
    said = [judged(*launches(rng, 3, 100, 1.25, 0.2)).verdict for _ in range(200)]
    assert said.count(congestion.NO_BOTTLENECK) <= 10, said.count(congestion.NO_BOTTLENECK)


def test_harrell_davis_weights_centre_on_the_quantile_from_its_minimum():
    """Rank (n + 1) q lies within n samples from q / (1 - q) of them on: 99 for the p99;
    below, the estimate is at most the largest sample."""
    assert harrell_davis_min_samples(0.99) == congestion.P99_MIN_SAMPLES == 99
    assert harrell_davis_min_samples(0.5) == 1 and harrell_davis_min_samples(0.95) == 19
    assert harrell_davis([1, 2, 3, 4, 5], 0.5) == pytest.approx(3.0)
    x = np.arange(1.0, 31.0)
    assert harrell_davis(x, 0.99) <= 30.0
    # the log of a sample of 0 s weighs nothing at the p99 (its weight underflows to 0)
    assert math.isfinite(harrell_davis(np.log(np.r_[1e-300, np.arange(1.0, 300.0)]), 0.99))


def test_the_bench_prints_its_three_tables():
    """bench/congestion.py at its smoke size (the figures: docs/statistics.md): the
    estimators' bias, the p99 CIF's coverage (none given from 30 samples a phase) and the
    median CIF's words."""
    done = subprocess.run([sys.executable, str(BENCH), "--smoke"], capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    number = r"[-+]?\d+\.\d+"
    estimators = [line for line in lines
                  if re.fullmatch(rf"\w+ +\d+ +(?:{number} +{number} +{number} *){{3}}", line)]
    assert len(estimators) == 3 * 3, done.stdout
    covers = [line.split() for line in lines
              if re.fullmatch(rf"\w+ +\w+ +\d+ +\d+ +{number} +(?:{number}|-) +{number} +"
                              rf"(?:{number}|-)", line)]
    assert len(covers) == 3 * 2 + 2, done.stdout
    assert all((row[5], row[6]) == ("-", "1.000") for row in covers if row[2] == "30")
    words = [line for line in lines
             if re.fullmatch(rf"\w+ +{number} +\d+ +{number}(?: +{number}){{4}}", line)]
    assert len(words) == 2 * 4 + 2 * 4, done.stdout


@pytest.mark.parametrize("args, named", [
    (["--hosts", "a,b,c"], "the canaries take 2"),
    (["--hosts", "a,b,c,d", "--placebo"], "2 on the near side (the placebo keeps both"),
    (["--hosts", HOSTS, "--canary-hosts", "a,a"], "two different hosts"),
    (["--hosts", HOSTS, "--canary-hosts", "a,x"], "two different hosts"),
    (["--hosts", HOSTS, "--aggressors-near", "a"], "a would hold a canary and an aggressor"),
    (["--hosts", HOSTS, "--aggressors-near", "b", "--aggressors-far", "b,c"],
     "b would hold a canary and an aggressor, or both sides"),
    (["--hosts", HOSTS, "--aggressors-far", "z"], "z is not one of --hosts"),
    (["--hosts", HOSTS, "--canary", "ring:8"], "KIND one of pingpong, bw, allreduce"),
    (["--hosts", HOSTS, "--canary", "bw:8,bw:16"], "each kind once"),
    (["--hosts", HOSTS, "--group", "3"], "bw aggressors stream in pairs"),
    (["--hosts", HOSTS, "--aggressors", "0"], "at least 1 group"),
    (["--hosts", "a,b,c,b"], "host b is listed twice"),
])
def test_bad_congestion_input_is_one_line_and_nothing_is_stored(fake_mpi, tmp_path, args,
                                                                 named):
    db = tmp_path / "r.db"
    done = commscope("congestion", *args, "--mpi", fake_mpi, "--db", db,
                     launcher=FakeLauncher())
    assert done.returncode == 2 and named in one_line_error(done)
    assert not db.exists()


@pytest.mark.cluster
@pytest.mark.mpi
def test_a_cross_rack_canary_shares_the_trunk_with_an_aggressor_pair(tmp_path):
    """Two racks of two hosts, the trunk at 100 Mbit/s: a bw canary from rack 0 to rack 1
    beside one aggressor pair crossing the same way gets half the trunk, a CIF of 2 (within
    the issue's 20%; measured here 1.96-2.11 on Open MPI), and the aggressors alone fill
    the trunk (11.6-12.0 MB/s of its 11.96 MB/s payload rate). Open MPI only: MPICH's ranks,
    more than the 2 cores here, throttle their progress (usleep between polls), and its
    stop-and-wait canary then read a CIF of 5.0 whatever the trunk's queue (100 or 10 ms)."""
    from cluster import cluster_of
    from test_cluster import commscope_on, payload_fraction
    with cluster_of(4, racks=2) as c:
        c.shape_trunk(100e6)
        done = commscope_on(c, c.hosts[0], "congestion", "--hosts", ",".join(c.hosts),
                            "--canary", "bw:128KiB", "--json", "--db", tmp_path / "results.db")
        trunk = 100e6 / 8 * payload_fraction(c, c.hosts[0])
    found = json.loads(done.stdout)
    (canary,) = found["canaries"]
    assert 1.6 <= canary["cif_median"] <= 2.4 and canary["verdict"] == "congested", found
    assert found["load"]["alone_Bps"] >= 0.9 * trunk, found
