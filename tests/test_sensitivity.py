"""Real slowdowns are caught, with the right magnitude, by the same default commands and
`compare` that stay quiet when nothing changed (tests/test_replication.py, the
calibration bench): a PMPI wrapper that delays every send by a known time, preloaded
into the ranks; and a shaped link whose rate is lowered by 10%. Real MPI shows that the
delay reaches every send through each library's launcher; that compare names such a delay
at each size with its magnitude is claimed on this machine's recorded launches
(bench/data/noise.json) replayed through the fake launcher."""

from __future__ import annotations

import json
import math
import os

import pytest

from cluster import CPUS, virtual_cluster  # noqa: F401  (the fixture)
from conftest import commscope
from fakempi.inprocess import FakeLauncher
from fakempi.native import ALPHA_S, BANDWIDTH_BPS
from pmpi import preloadable
from test_cluster import commscope_on
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


@pytest.mark.mpi
def test_a_link_slowed_by_ten_percent_is_caught(virtual_cluster, mpi_prefix, tmp_path):
    a, b = virtual_cluster.hosts
    db = tmp_path / "results.db"
    rate = 800e6
    for factor in (1.0, 0.9):  # run 1 at the rate, run 2 at 90% of it
        for host in (a, b):
            virtual_cluster.shape(host, rate * factor)
        # Both hosts in the first host's CPU set, the other CPU left to the rest of the
        # machine (docs/cluster.md). Unpinned, ranks traded the 2 cores between launches
        # and a launch in a few ran 70% slower at 1 MiB; on a CPU each, 256 KiB samples
        # ranged 8.6-15 ms (10.1-11.3 ms in one set), and one launch's median made this
        # test fail in 11 of 33 trials (0 of 56 in one set), on either MPI.
        # Six launches a side, as the delayed-send test above, of more than the 3 samples
        # a 1 s budget leaves each: in fresh-clone CI runs a launch of 3 samples fell 4.5%
        # below its run's others at 256 KiB, and one of six ran 27% slow at 1 MiB, each
        # leaving an interval across the 5% threshold (undetermined, on this code and on
        # b63b3ae's alike). 256 KiB alone: at 1 MiB a launch in a few here still ran
        # 27-70% slow (in 4 of 6 fresh-clone CI runs one did: +6.1%, -19.4% to +39.5%,
        # undetermined), a state of this testbed that the interval rightly takes in.
        commscope_on(virtual_cluster, a, "run", "bw", "--mpi", mpi_prefix, "--hosts",
                     f"{a}:1,{b}:1", "--sizes", "256KiB", "--window", "4",
                     "--launches", "6", "--max-time", "4", "--db", db,
                     env={**os.environ, CPUS: "shared"})
    code, found = changes(db, "1", "2")
    expected = 1 / 0.9 - 1  # time per byte grows as the rate shrinks: +11.1%
    for nbytes, c in found.items():
        print(f"{nbytes} B: {c['relative']:+.2%} ({c['relative_ci_low']:+.2%} to "
              f"{c['relative_ci_high']:+.2%}), expected {expected:+.2%}: {c['verdict']}")
        assert c["verdict"] in ("regression", "slower")
        assert c["relative"] == pytest.approx(expected, abs=0.03)
        assert c["relative_ci_low"] <= expected <= c["relative_ci_high"]
    assert code == (1 if any(c["regression"] for c in found.values()) else 0)
