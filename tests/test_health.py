"""`commscope health` on the fake launcher, where each pair's rate is set exactly: the
attribution (a node, a link, a step, nothing), its contract (JSON, JUnit, Prometheus, exit
status, drain line), the report, and refusals; the tournament and shift schedules of the
real kernels on both MPIs. On the namespace cluster: tests/test_health_cluster.py."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import os
import re
import sqlite3

import numpy as np
import pytest

from conftest import commscope, one_line_error
from fakempi.inprocess import FakeLauncher
from commscope.health.health import TOLERANCE, Matrices, fit, judge
from screensim import check_of, matrices_of

RATE = 5e7  # bytes/s of a pair
HOSTS = [f"h{i}" for i in range(8)]


def health(fake_mpi, db, *args, rate=lambda x, y: RATE, hosts=HOSTS, launcher=None):
    done = commscope("health", "--hosts", ",".join(hosts), "--mpi", fake_mpi, "--db", db,
                     "--sizes", "8,256KiB", "--json", *args,
                     launcher=launcher or FakeLauncher(rate=rate))
    assert done.returncode in (0, 1, 3), done.stderr
    return done.returncode, json.loads(done.stdout)


def kinds(result) -> list[tuple]:
    return sorted((s["kind"], tuple(s["hosts"]), s.get("distance")) for s in result["suspects"])


@pytest.mark.parametrize("pattern", ["pairs", "shift"])
def test_nothing_slow_names_nothing_and_the_json_is_the_contract(fake_mpi, tmp_path, pattern):
    code, result = health(fake_mpi, tmp_path / "h.db", "--pattern", pattern)
    assert code == 0 and result["suspects"] == [] and result["drain"] == []
    assert result["nodes"] == HOSTS and result["pattern"] == pattern
    assert result["rounds"] == result["launches"] * 7  # 8 nodes: 7 rounds or distances
    assert result["pair_tests"] == result["launches"] * 8 * 7
    for which in ("bandwidth_MBps", "latency_s"):
        m = result["matrix"][which]
        assert len(m) == 8 and all(len(row) == 8 for row in m)
        for x, y in itertools.product(range(8), repeat=2):
            assert (m[x][y] is None) == (x == y), (which, x, y)  # every pair measured
    bandwidth = np.array(result["matrix"]["bandwidth_MBps"], dtype=float)
    assert np.allclose(bandwidth[~np.eye(8, dtype=bool)], RATE / 1e6, rtol=0.1)
    assert set(result["node_scores"]) == set(HOSTS)
    assert ("by_distance" in result) == (pattern == "shift")


@pytest.mark.parametrize("pattern", ["pairs", "shift"])
@pytest.mark.parametrize("bad", [0, 5])
def test_a_slow_node_is_named_alone_and_drained(fake_mpi, tmp_path, pattern, bad):
    code, result = health(fake_mpi, tmp_path / "h.db", "--pattern", pattern,
                          rate=lambda x, y: RATE / 4 if bad in (x, y) else RATE)
    assert code == 1
    assert kinds(result) == [("node", (HOSTS[bad],), None)]
    (s,) = result["suspects"]
    assert s["ratio"] == pytest.approx(0.25, rel=0.05)
    assert s["ci"][0] <= s["ratio"] <= s["ci"][1] < 0.8
    assert s["measured"] == pytest.approx(s["expected"] * s["ratio"], rel=1e-6)
    assert result["drain"] == [HOSTS[bad]]


def test_a_slow_link_one_way_is_a_link_and_no_node(fake_mpi, tmp_path):
    code, result = health(fake_mpi, tmp_path / "h.db",
                          rate=lambda x, y: RATE / 2 if (x, y) == (6, 2) else RATE)
    assert code == 1
    assert kinds(result) == [("link", ("h2", "h6"), None)]
    assert result["suspects"][0]["direction"] == "h6->h2"
    assert result["drain"] == []


def test_a_slow_distance_in_shift_is_a_step(fake_mpi, tmp_path):
    code, result = health(fake_mpi, tmp_path / "h.db", "--pattern", "shift",
                          rate=lambda x, y: RATE / 2 if (y - x) % 8 == 3 else RATE)
    assert code == 1
    assert kinds(result) == [("step", (), 3)]
    assert np.nanmax(np.array(result["by_distance"]["bandwidth_MBps"], dtype=float)[:, 2]) \
        < 0.6 * RATE / 1e6


def test_a_slowdown_within_the_threshold_is_not_named(fake_mpi, tmp_path):
    code, result = health(fake_mpi, tmp_path / "h.db",
                          rate=lambda x, y: RATE * 0.9 if 2 in (x, y) else RATE)
    assert code == 0 and result["suspects"] == []
    assert result["node_scores"]["h2"] == pytest.approx(0.9, rel=0.05)


def test_two_ranks_per_node_are_one_node_with_both_streams(fake_mpi, tmp_path):
    code, result = health(fake_mpi, tmp_path / "h.db", "--ppn", "2", hosts=HOSTS[:6],
                          rate=lambda x, y: RATE / 4 if 4 in (x, y) else RATE)
    assert code == 1 and result["nodes"] == HOSTS[:6] and result["drain"] == ["h4"]
    assert result["matrix"]["bandwidth_MBps"][0][1] == pytest.approx(2 * RATE / 1e6, rel=0.1)


def test_auto_launches_measure_at_least_three(fake_mpi, tmp_path):
    code, result = health(fake_mpi, tmp_path / "h.db", "--launches", "auto",
                          rate=lambda x, y: RATE / 4 if 6 in (x, y) else RATE)
    assert code == 1 and result["launches"] >= 3 and result["drain"] == ["h6"]


def test_one_launch_names_nothing_and_says_why(fake_mpi, tmp_path):
    code, result = health(fake_mpi, tmp_path / "h.db", "--launches", "1",
                          rate=lambda x, y: RATE / 4 if 3 in (x, y) else RATE)
    assert code == 3 and result["suspects"] == [] and "one launch" in result["note"]


def test_fail_on_undetermined_fails_every_node_and_link_one_launch_cannot_judge(fake_mpi,
                                                                             tmp_path):
    from xml.etree import ElementTree
    xml = tmp_path / "health.xml"
    hosts = HOSTS[:4]
    code, _ = health(fake_mpi, tmp_path / "h.db", "--launches", "1", "--junit", xml,
                     hosts=hosts)
    root = ElementTree.parse(xml).getroot()
    assert code == 3 and (root.get("failures"), root.get("skipped")) == ("0", "10")
    code, _ = health(fake_mpi, tmp_path / "h2.db", "--launches", "1", "--junit", xml,
                     "--fail-on", "undetermined", hosts=hosts)
    root = ElementTree.parse(xml).getroot()
    assert code == 1 and (root.get("failures"), root.get("skipped")) == ("10", "0")
    assert {f.get("type") for f in root.iter("failure")} == {"inconclusive"}


def test_an_odd_number_of_nodes_plays_n_rounds_and_meets_every_pair(fake_mpi, tmp_path):
    code, result = health(fake_mpi, tmp_path / "h.db", hosts=HOSTS[:5],
                          rate=lambda x, y: RATE / 4 if 4 in (x, y) else RATE)
    assert code == 1 and kinds(result) == [("node", ("h4",), None)]
    rounds = sqlite3.connect(tmp_path / "h.db").execute(
        "SELECT settings FROM runs").fetchone()[0]
    assert json.loads(rounds)["each"] == {"round": ["1", "2", "3", "4", "5"]}


def test_the_model_recovers_node_and_step_effects_to_its_tolerance():
    rng = np.random.default_rng(1)
    n = 9
    a, s = rng.normal(0, 0.3, n), np.r_[0, rng.normal(0, 0.2, n - 1)]
    a -= np.median(a)
    s[1:] -= np.median(s[1:])
    x = np.arange(n)
    logs = 3.0 + a[:, None] + a[None, :] + s[(x[None, :] - x[:, None]) % n]
    np.fill_diagonal(logs, np.nan)
    got = fit(logs, steps=True)
    assert got.mu == pytest.approx(3.0, abs=TOLERANCE)
    assert np.allclose(got.nodes, a, atol=TOLERANCE)
    assert np.allclose(got.steps, s[1:], atol=TOLERANCE)


@pytest.mark.parametrize("nodes", [4, 17])
def test_a_node_is_measured_against_the_others_alone(nodes):
    """No noise, the typical nodes spread about 1 and one node at 0.8 of the bandwidth:
    its effect is 0.8 of the others' median, as the fit of the others alone (4 nodes) and
    the others' median in the fit of all (17) both give, within two of the polish's
    steps. Against the median of all N, itself among them, it read 0.884 at 4 nodes and
    0.806 at 17."""
    spread = np.linspace(-0.1, 0.1, nodes - 1)
    a = np.r_[math.log(0.8), spread - np.median(spread)]
    logs = 3.0 + a[:, None] + a[None, :]
    np.fill_diagonal(logs, np.nan)
    bw = np.exp(np.array([logs, logs]))
    m = Matrices([f"n{i}" for i in range(nodes)], "pairs", bw, np.ones_like(bw), 1 << 20, 8)
    got = {c.hosts[0]: c for c in judge(m, 0.2).candidates if c.kind == "node"}
    assert got["n0"].values == pytest.approx([math.log(0.8)] * 2, abs=2 * TOLERANCE)
    e = got["n0"].claim.evidence
    assert e["measured"] == pytest.approx(e["expected"] * got["n0"].claim.ratio)


def test_a_node_at_the_threshold_among_four_is_rarely_cleared():
    """Simulated checks of 4 nodes, 10 launches, 3% node-by-launch and 5% pair noise, one
    node at the threshold itself (0.8): "no more than 20% slower" is true at its
    boundary, so a test at 5% clears it in at most 5% of checks. 60 checks: at a true 5%,
    10 or more clear it in 0.2% of seeds; the median polish centred on all 4 nodes cleared
    it in 30 of these 60 (38.5% of 200 in issue 49), this estimator in 2."""
    slow = np.r_[math.log(0.8), np.zeros(3)]
    checks = [check_of(slow, 0.2, 10, seed) for seed in range(60)]
    assert sum("n0" in h.cleared for h in checks) <= 9
    assert sum("n0" in h.drain for h in checks) <= 9


def test_a_matrix_measured_in_halves_judges_every_node_and_link_but_the_pair():
    """A pair that cannot connect (n1, n2) measured as health measures the rest
    (preflight.check_hosts): each launch without one end, n2's in launches 1, 3, 5, n1's in
    2, 4, 6. A node at 0.5 (n5) is named, a link at 0.5 from n1 (n1->n6, measured only in
    n1's launches) named as a link, and the pair's own link never tested: a link taken
    only where every launch measured it had n1's and n2's never tested."""
    links = np.zeros((8, 8))
    links[1, 6] = math.log(0.5)
    m = matrices_of(np.r_[0, 0, 0, 0, 0, math.log(0.5), 0, 0], 6, 1, links=links)
    for k in range(6):
        gone = 2 if k % 2 == 0 else 1
        m.bandwidth[k, gone, :] = m.bandwidth[k, :, gone] = np.nan
    found = judge(m, 0.2)
    assert sorted((c.kind, c.direction or c.hosts[0]) for c in found.suspects) == \
        [("link", "n1->n6"), ("node", "n5")]
    (pair,) = [c for c in found.verdicts() if c.subject == "n1 n2"]
    assert (pair.word, pair.launches, pair.interval) == ("inconclusive", 0, None)
    assert {"n1", "n2"} <= set(found.cleared + found.unresolved)


def test_a_pair_that_cannot_connect_is_unreachable_and_the_rest_is_judged(fake_mpi, tmp_path):
    """h1 and h2 cannot connect: every launch holding both hangs, the start-up check too
    (as MPICH's did over a blackhole route). Before issue 50 the check exited 2, "the
    matrix is incomplete"; now the pair is traced, named `unreachable` with its remedy,
    and the matrix measured again without it (a launch without each end) judges the
    rest: a slow node h5 named, every other pair measured."""
    xml = tmp_path / "h.xml"
    fake = FakeLauncher(rate=lambda x, y: RATE / 4 if 5 in (x, y) else RATE,
                        host_order=HOSTS, hangs_if=lambda hosts: {"h1", "h2"} <= set(hosts))
    code, result = health(fake_mpi, tmp_path / "h.db", "--deadline", "0.5", "--launches", "3",
                          "--junit", xml, launcher=fake)
    assert code == 1
    unreachable, node = result["suspects"]
    assert (unreachable["kind"], sorted(unreachable["hosts"])) == ("unreachable", ["h1", "h2"])
    assert unreachable["evidence"] == ("no launch that held both finished; each finished "
                                       "with other nodes")
    assert unreachable["remedy"].startswith("check the route and firewall between the two")
    assert (node["kind"], node["hosts"]) == ("node", ["h5"]) and result["drain"] == ["h5"]
    assert result["launches"] == 6 and result["rounds"] == 6 * 7
    bw = result["matrix"]["bandwidth_MBps"]
    assert [(x, y) for x in range(8) for y in range(8) if x != y and bw[x][y] is None] == \
        [(1, 2), (2, 1)]
    from xml.etree import ElementTree
    failed = {(c.get("name"), f.get("type")) for c in ElementTree.parse(xml).iter("testcase")
              for f in c.iter("failure")}
    assert failed == {("h1 h2", "unreachable"), ("h5", "suspect")}
    said = {c.get("name"): (f.get("message") if f is not None else c.findtext("system-out"))
            for c in ElementTree.parse(xml).iter("testcase")
            for f in [c.find("failure") if c.find("failure") is not None else c.find("skipped")]}
    # the verdict core's words: a fault's what was seen, a link through a drained node's figures
    assert re.match(r"unreachable: h[12] -> h[12]: no launch that held both finished; each "
                    r"finished with other nodes; check the route", said["h1 h2"]), said
    assert re.match(r"undetermined: ratio \S+ \(interval \S+ to \S+\), p \S+, launches \d+; "
                    r"through drained node h5$", said["h0 h5"]), said
    done = commscope("health", "--hosts", ",".join(HOSTS), "--mpi", fake_mpi, "--db",
                     tmp_path / "t.db", "--sizes", "8,256KiB", "--deadline", "0.5",
                     "--launches", "3", launcher=dataclasses.replace(fake, launched=[]))
    assert done.returncode == 1, done.stderr
    assert re.search(r"^unreachable\s+h[12] -> h[12](\s+-){5}$", done.stdout, re.M), done.stdout
    assert re.search(r"^unreachable h[12] -> h[12]: no launch that held both finished; each "
                     r"finished with other nodes; measured again without it; remedy: check the "
                     r"route", done.stdout, re.M), done.stdout
    assert "p (BH): the p-value adjusted" in done.stdout


def test_benjamini_hochberg_is_scipys():
    from scipy import stats

    from commscope.stats.stats import benjamini_hochberg

    p = np.random.default_rng(3).random(300) ** 4
    assert np.allclose(benjamini_hochberg(p), stats.false_discovery_control(p))


def test_junit_has_a_testcase_per_node_and_link_and_prometheus_parses(fake_mpi, tmp_path):
    import junitparser
    from prometheus_client import parser
    xml, prom = tmp_path / "health.xml", tmp_path / "health.prom"
    code, result = health(fake_mpi, tmp_path / "h.db", "--junit", xml, "--prom", prom,
                          rate=lambda x, y: RATE / 4 if 7 in (x, y) else RATE)
    assert code == 1
    read = junitparser.JUnitXml.fromfile(str(xml))  # a <testsuite> root: a suite, or one in a list
    (suite,) = [read] if isinstance(read, junitparser.TestSuite) else list(read)
    cases = list(suite)
    assert len(cases) == 8 + 8 * 7 // 2
    failed = [c.name for c in cases if any(isinstance(r, junitparser.Failure) for r in c.result)]
    assert failed == ["h7"]
    # each testcase the verdict core's claim: its word, ratio, interval, p, launches, remedy
    (failure,) = next(c for c in cases if c.name == "h7").result
    assert re.match(r"suspect: ratio 0\.2\d \(interval 0\.2\d to 0\.2\d\), p \S+, launches "
                    r"10; drain it and test it alone", failure.message), failure.message
    assert re.match(r"cleared: ratio (0\.9\d|1\.0\d) \(interval \S+ to \S+\), p \S+, launches 10$",
                    next(c for c in cases if c.name == "h0").system_out)
    # a link through h7 is h7's failure, skipped; every other node and link is decided
    skipped = {c.name for c in cases if c.is_skipped}
    assert skipped <= {c.name for c in cases if "h7" in c.name.split()}
    families = {f.name: f for f in parser.text_string_to_metric_families(prom.read_text())}
    pairs = families["commscope_health_pair_bandwidth_bytes_per_second"].samples
    assert len(pairs) == 8 * 7
    scores = {s.labels["host"]: s.value for s in families["commscope_health_node_score"].samples}
    assert scores["h7"] == pytest.approx(0.25, rel=0.05)
    assert [s.labels["hosts"] for s in families["commscope_health_suspect"].samples] == ["h7"]
    assert [s.labels["host"] for s in families["commscope_health_drain"].samples] == ["h7"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".health.prom.")]


def test_an_interrupted_prometheus_write_leaves_the_old_file_whole(tmp_path, monkeypatch):
    from commscope.cli.common import write_atomic

    target = tmp_path / "health.prom"
    target.write_text("old\n")
    real = os.fsync

    def dies(fd):  # the write is cut short after its bytes, before the rename
        real(fd)
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", dies)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(str(target), "new\n" * 1000)
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["health.prom"]


def test_the_report_draws_the_heat_maps_with_the_suspects(fake_mpi, tmp_path):
    db = tmp_path / "h.db"
    health(fake_mpi, db, rate=lambda x, y: RATE / 4 if 1 in (x, y) else RATE)
    health(fake_mpi, db, "--pattern", "shift")
    done = commscope("report", "--db", db, "-o", tmp_path / "r.html")
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "r.html").read_text()
    assert "Node and link health" in html and "drain: h1" in html and "drain: none" in html
    assert html.count("heat map") >= 4 and "Bandwidth by distance" in html


def test_bad_input_is_one_line_and_nothing_is_stored(fake_mpi, tmp_path):
    db = tmp_path / "h.db"

    def refused(*args, launcher=None) -> str:
        done = commscope("health", "--mpi", fake_mpi, "--db", db, *args,
                         launcher=launcher or FakeLauncher())
        return one_line_error(done)

    assert "one host (h0)" in refused("--hosts", "h0")
    assert "--threshold 120%" in refused("--hosts", "h0,h1,h2", "--threshold", "120%")
    hostfile = tmp_path / "hosts"
    hostfile.write_text("h0 slots=2\nh1 slots=1\n")
    line = refused("--hostfile", hostfile, "--ppn", "2")
    assert "--ppn 2" in line and "host h1" in line
    assert "--hosts" in refused()  # no hosts and no allocation
    assert "--transient is for --screen" in refused("--hosts", "h0,h1,h2", "--transient", "ok")
    down = FakeLauncher(exit_code=255,
                        stderr=["ssh: connect to host h2 port 22: No route to host\n"],
                        fail_after=0)
    line = refused("--hosts", "h0,h1,h2", launcher=down)
    assert "host h2 cannot be reached" in line
    assert not db.exists() or sqlite3.connect(db).execute(
        "SELECT count(*) FROM runs WHERE status = 'complete'").fetchone()[0] == 0


@pytest.mark.parametrize("ranks", [4, 5])
def test_the_native_schedules_meet_every_pair_once(mpi_prefix, tmp_path, ranks):
    """The real kernels' peers: pairs' rounds meet each pair exactly once (a node sits out
    each round when the count is odd), shift's sources are x - d; payloads validated."""
    from commscope.system.build import native_binary
    from commscope.system.launcher import launch
    from commscope.system.mpi import find_mpi

    mpi = find_mpi(str(mpi_prefix))
    binary = native_binary(mpi)
    rounds = ranks - 1 + ranks % 2
    met = []
    for kernel, name, values in (("pairs", "round", rounds), ("shift", "distance", ranks - 1)):
        out = tmp_path / f"{kernel}.jsonl"
        how = launch(mpi, ranks, binary, ["--kernel", kernel, "--sizes", "8,4096", "--iters", "2",
                                          "--validate", "--each",
                                          f"{name}=" + ",".join(map(str, range(1, values + 1))),
                                          "--output", str(out)])
        import subprocess
        done = subprocess.run(how.argv, env=how.env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        records = [json.loads(x) for x in out.read_text().splitlines()]
        cases = [r for r in records if r["type"] == "case" and r["bytes"] == 8]
        assert len(cases) == values and all(r["validated"] for r in cases)
        for r in cases:
            peers, v = r["peers"], int(r["variant"][name])
            if kernel == "pairs":
                assert all(peers[p] == x for x, p in enumerate(peers) if p >= 0)
                assert sum(p < 0 for p in peers) == ranks % 2
                met += [frozenset((x, p)) for x, p in enumerate(peers) if p > x]
            else:
                assert peers == [(x - v) % ranks for x in range(ranks)]
    assert sorted(map(sorted, met)) == sorted(map(sorted, itertools.combinations(range(ranks), 2)))


@pytest.mark.parametrize("count", [3, 5, 6, 7, 8])
@pytest.mark.parametrize("bad", [0, 1, 2])
def test_a_hung_node_is_found_whichever_half_it_falls_in(count, bad):
    """A hung node stops every launch that holds it; a half of one node is tried with a
    partner from outside the failing set, never with a node that may be the fault."""
    from commscope.health.preflight import diagnose
    nodes = list(range(count))
    found = diagnose(lambda part: None if bad in part else 1, nodes, nodes)
    assert [(f["kind"], f["nodes"]) for f in found] == [("hung", (bad,))]


@pytest.mark.parametrize("count", [3, 4, 6, 7])
@pytest.mark.parametrize("pair", [(0, 1), (0, 2), (1, 2)])
def test_a_pair_that_cannot_talk_is_found_wherever_it_falls(count, pair):
    from commscope.health.preflight import diagnose
    nodes = list(range(count))
    found = diagnose(lambda part: None if set(pair) <= set(part) else 1, nodes, nodes)
    assert [(f["kind"], tuple(sorted(f["nodes"]))) for f in found] == [("unreachable", pair)]
