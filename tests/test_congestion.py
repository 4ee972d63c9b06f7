"""`commscope congestion` (congestion.py): the layout that puts each aggressor group across
the canaries' path, the congestion impact factor recovered from the fake launcher's known
truth (tests/fakempi/native.py: each group slows a canary by half its time alone), its
JSON, and bad input refused before anything runs or is stored."""

from __future__ import annotations

import json
import sqlite3

import pytest
from conftest import commscope, one_line_error, validator
from fakempi.inprocess import FakeLauncher
from fakempi.native import AGGRESSOR_BPS, CIF_PER_GROUP

from commscope import congestion

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
    validator("urn:commscope:congestion:1").validate(found)
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
