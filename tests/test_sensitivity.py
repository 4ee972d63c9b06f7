"""Real slowdowns are caught, with the right magnitude, by the same default commands and
`compare` that stay quiet when nothing changed (tests/test_replication.py, the
calibration bench): a PMPI wrapper that delays every send by a known time, preloaded
into the ranks; and a shaped link whose rate is lowered by 10%."""

from __future__ import annotations

import json
import os

import pytest

from cluster import CPUS, virtual_cluster  # noqa: F401  (the fixture)
from conftest import commscope
from pmpi import preloadable
from test_cluster import commscope_on

pytestmark = pytest.mark.mpi

# Large beside a slow launch, since this test must pass every time: launches here at times
# run 2-6x slower at every size (once 70x at 1 KiB), and with the launch as the unit, a
# 5 us delay (2.3x at 16 KiB) was rightly 'within noise' in 1 of 4 trials, and 20 us (5x)
# 'slower' or 'within noise' in 3 of 51 runs with six launches a side (and once in a
# fresh-clone CI run), 50 us in 1 of 30 (the 70x launch). How small a shift `compare`
# catches how often is bench/calibration.py's question; this test's is that a known fault
# is named at each size with its magnitude.
DELAY_US = 200.0
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


def test_a_delayed_send_is_a_regression_of_its_size(mpi_prefix, db, tmp_path):
    # Six launches a side: three left the 16 KiB case (a 20 us delay then) 'within noise' in
    # a fresh-clone CI run, as a launch in the slow state above does.
    sizes = ("--sizes", "8,1KiB,16KiB", "--launches", "6", "--mpi", mpi_prefix, "--db", db)
    # Run 1 as it is; run 2 through the wrapper with no delay, which costs a call and two
    # clock reads per send (0.02-0.35 us here); run 3 delayed. Run 3 against run 2 shifts
    # by the delay alone.
    for env in ({}, {"LD_PRELOAD": delay_library(mpi_prefix, tmp_path, 0)},
                {"LD_PRELOAD": delay_library(mpi_prefix, tmp_path, DELAY_US)}):
        done = commscope("run", "pingpong", *sizes, env={**os.environ, **env})
        assert done.returncode == 0, done.stderr
    code, found = changes(db, "1", "3")
    assert code == 1  # compare's exit: a regression
    assert all(c["verdict"] == "regression" for c in found.values()), {
        b: (c["verdict"], c["median_a_s"], c["median_b_s"], c["relative_ci_low"], c["p_adjusted"])
        for b, c in found.items()}
    code, found = changes(db, "2", "3")
    covered = 0
    for nbytes, c in found.items():
        assert c["verdict"] == "regression", c
        shift_us = (c["median_b_s"] - c["median_a_s"]) * 1e6
        low, high = (c["median_a_s"] * c[k] * 1e6 for k in ("relative_ci_low",
                                                          "relative_ci_high"))
        print(f"{nbytes} B: +{shift_us:.2f} us (95% CI {low:.2f} to {high:.2f}), "
              f"injected {DELAY_US} us")
        # The magnitude: the delay, not noise or twice it. A tighter band on the estimate
        # alone failed a fresh-clone CI run at +24.2 us (interval 7.5 to 77), a launch in
        # the slow state above; that the interval holds the delay is the test below.
        assert DELAY_US / 2 < shift_us < 2 * DELAY_US
        covered += low <= DELAY_US <= high
    # Each 95% interval misses the true shift one time in 20: asking all three to hold
    # fails 14% of suites, two of three 0.7%.
    assert covered >= 2


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
