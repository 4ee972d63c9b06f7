"""Real slowdowns are caught, with the right magnitude, by the same default commands and
`compare` that stay quiet when nothing changed (tests/test_replication.py, the
calibration bench): a PMPI wrapper that delays every send by a known time, preloaded
into the ranks; and a link whose rate is lowered by 10%. Real MPI shows that the delay
reaches every send through each library's launcher; that compare names such a delay, or
such a link, at each size with its magnitude is claimed on this machine's recorded
launches (bench/data/noise.json) replayed through the fake launcher."""

from __future__ import annotations

import json
import math
import os

import pytest

from conftest import commscope
from fakempi.inprocess import FakeLauncher
from fakempi.native import ALPHA_S, BANDWIDTH_BPS
from pmpi import preloadable
from test_noise_replay import recorded

DELAY_US = 200.0  # on real MPI: far above any launch's own time at these sizes
# Every MPI_Send (and MPI-4's MPI_Send_c) waits DELAY_US before it sends: a ping-pong round
# trip has one send per rank, so its half round trip grows by exactly DELAY_US.
WRAPPER = r"""
int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    delay(%(us)g);
    return PMPI_Send(buf, count, type, dest, tag, comm);
}
#if MPI_VERSION >= 4
int MPI_Send_c(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
               MPI_Comm comm)
{
    delay(%(us)g);
    return PMPI_Send_c(buf, count, type, dest, tag, comm);
}
#endif
"""


def delay_library(mpi_prefix, where, delay_us: float) -> str:
    return preloadable(mpi_prefix, where, f"delay{delay_us:g}", WRAPPER % {"us": delay_us})


def changes(db, a, b) -> tuple[int, dict]:
    done = commscope("compare", a, b, "--json", "--db", db)
    assert done.returncode in (0, 1, 3), done.stderr
    return done.returncode, {c["bytes"]: c for c in json.loads(done.stdout)["cases"]}


@pytest.mark.mpi
def test_a_preloaded_delay_holds_every_send_and_compare_judges_it(mpi_prefix, db, tmp_path):
    """The wrapper reaches every rank through the library's launcher: every launch's half
    round trip of the delayed run is at least the delay (each rank's send waits it, a busy
    wait on the clock, so no noise can make it shorter). compare of the two runs judges
    each size, its exit status that of its verdicts. Whether the verdict names the delay
    with its magnitude is the test below: on this 2-core machine the delayed launches at
    times ran 2-6x slower, and six launches a side left a size 'within noise' in 1 of 30
    runs (and in a fresh-clone CI run), a statistic of the machine's noise."""
    sizes = ("--sizes", "8,1KiB,16KiB", "--launches", "2", "--mpi", mpi_prefix, "--db", db,
             "--json")
    for env in ({}, {"LD_PRELOAD": delay_library(mpi_prefix, tmp_path, DELAY_US)}):
        done = commscope("run", "pingpong", *sizes, env={**os.environ, **env})
        assert done.returncode == 0, done.stderr
    delayed = {c["bytes"]: c["launch_medians_s"] for c in json.loads(done.stdout)["cases"]}
    assert sorted(delayed) == [8, 1024, 16384]
    assert all(len(m) == 2 and min(m) >= DELAY_US * 1e-6 for m in delayed.values()), delayed
    code, found = changes(db, "1", "2")
    assert sorted(found) == [8, 1024, 16384]
    regressions = any(c["regression"] for c in found.values())
    assert (code == 1) if regressions else (code in (0, 3)), (code, found)
    assert all(c["median_b_s"] >= DELAY_US * 1e-6 for c in found.values()), found


# The delay replayed: each size's time grows by 2 x DELAY_S (a send per rank in a round
# trip), ten times the fake's 8 B time and twice its 64 KiB time, on recorded launches
DELAY_S = 20e-6


def _delayed(ratios, sizes: list[int], delay_s: float) -> FakeLauncher:
    """The fake whose launch n takes ratios[n - 1] of the fake's own time at each size (the
    recorded launch), plus two sends' delay_s."""
    at = {b: i for i, b in enumerate(sizes)}

    def factor(launch: int, nbytes: int) -> float:
        base_s = (ALPHA_S + nbytes / BANDWIDTH_BPS) * math.log2(3)  # native.case, 2 ranks
        return float(ratios[launch - 1, at[nbytes]]) + 2 * delay_s / base_s
    return FakeLauncher(replay=factor)


@pytest.mark.parametrize("condition", ["quiet", "busy", "busy_both", "second_job",
                                       "cluster"])
def test_a_delayed_send_is_a_regression_of_its_size(fake_mpi, tmp_path, condition):
    """Two recorded commands of the condition (5 launches each, bench/data/noise.json),
    the second with every send delayed by DELAY_S: compare names every size a regression,
    by the delay (not noise, not twice it), its 95% interval holding the delay at two
    sizes of three at least (each misses one time in 20: all three fail 14% of such
    pairs). How small a delay is caught how often: bench/calibration.py."""
    sizes, commands = recorded(condition, "pingpong")
    db = tmp_path / "results.db"
    for ratios, delay_s in ((commands[0], 0.0), (commands[1], DELAY_S)):
        done = commscope("run", "pingpong", "--sizes", "8,4KiB,64KiB", "--launches",
                         len(ratios), "--mpi", fake_mpi, "--db", db,
                         launcher=_delayed(ratios, sizes, delay_s))
        assert done.returncode == 0, done.stderr
    code, found = changes(db, "1", "2")
    assert code == 1 and sorted(found) == [8, 4096, 65536]
    covered = 0
    for c in found.values():
        assert c["verdict"] == "regression", c
        shift_s = c["median_b_s"] - c["median_a_s"]
        assert DELAY_S / 2 < shift_s < 2 * DELAY_S, c
        low, high = (c["median_a_s"] * c[k] for k in ("relative_ci_low", "relative_ci_high"))
        covered += low <= DELAY_S <= high
    assert covered >= 2, found


RATE = 0.9  # the link at 90% of its rate: time per byte grows by 1/0.9, +11.1%


def _slowed_link(ratios, sizes: list[int], rate: float) -> FakeLauncher:
    """The fake whose launch n takes ratios[n - 1] of its own time at each size (the
    recorded launch), with the bytes carried at `rate` of its bandwidth."""
    at = {b: i for i, b in enumerate(sizes)}

    def factor(launch: int, nbytes: int) -> float:
        return float(ratios[launch - 1, at[nbytes]]) * _slowdown(nbytes, rate)
    return FakeLauncher(replay=factor)


def _slowdown(nbytes: int, rate: float) -> float:
    return (ALPHA_S + nbytes / (BANDWIDTH_BPS * rate)) / (ALPHA_S + nbytes / BANDWIDTH_BPS)


def test_a_link_slowed_by_ten_percent_is_judged_within_what_the_noise_lets_it_see(
        fake_mpi, tmp_path):
    """A link at 90% of its rate, on the recorded commands of the namespace cluster (its
    ranks on two hosts over a veth bridge, 5 launches each, bench/data/noise.json): nine
    at the rate, the tenth slowed. compare of the last two, against the spread between the
    earlier ones, gives an interval that holds the slowdown (at 64 KiB it read +8.4%, at
    1 MiB +15.4%, for +10.3% and +11.1%), and never calls it unchanged or faster. Whether
    it names it: the cluster's launches spread 15% and its commands' means 5%, so two
    commands of 5 launches detect 1.5x at 80% power, and a 10% change is undetermined,
    saying so; a smaller change is seen side by side (`compare --live`, `check`: launches
    alternated). On real MPI this test asked for a name and got one or not by the
    testbed's state (undetermined in a fresh-clone CI run, where one launch in six ran
    27% slow). That a shaped link's rate reaches the measurement on real MPI is
    test_cluster.py's recovered bandwidth (within 5% at 200 and 800 Mbit/s)."""
    sizes, commands = recorded("cluster", "pingpong")
    db = tmp_path / "results.db"
    for i, ratios in enumerate(commands):
        done = commscope("run", "pingpong", "--sizes", "64KiB,1MiB", "--launches",
                         len(ratios), "--mpi", fake_mpi, "--db", db,
                         launcher=_slowed_link(ratios, sizes, RATE if i == 9 else 1.0))
        assert done.returncode == 0, done.stderr
    code, found = changes(db, "9", "10")
    assert sorted(found) == [65536, 1048576]
    for nbytes, c in found.items():
        expected = _slowdown(nbytes, RATE) - 1
        assert c["method"] == "student+history", c
        assert c["relative_ci_low"] <= expected <= c["relative_ci_high"], c
        assert c["verdict"] in ("regression", "slower", "undetermined"), c
        if c["verdict"] == "undetermined":  # blind to it, and saying so
            assert c["detectable_ratio"] > 1 + expected, c
    assert code == (1 if any(c["regression"] for c in found.values()) else 3)
