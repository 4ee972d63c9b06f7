"""Derived metrics follow each kernel's documented definition (docs/native.md)."""

import pytest

from commscope.system.errors import UserError
from commscope.system.kernels import catalog
from commscope.measure.params import check_sizes, modes_for, params_for


def kernel(name):
    return catalog().kernel(name)


def effective_window(window, nbytes):
    return catalog().window_used(kernel("bw"), window, nbytes)


class Shape:
    """The few case fields the kernel definitions read."""

    def __init__(self, nbytes, ranks=2, window=None, **params):
        self.bytes, self.ranks, self.window, self.params = nbytes, ranks, window, params


def test_pingpong_latency_is_half_round_trip_and_bandwidth_per_direction():
    k = kernel("pingpong")
    assert k.latency(4e-6, Shape(1000)) == 2e-6
    assert k.bandwidth_Bps(4e-6, Shape(1000)) == pytest.approx(5e8)


def test_bw_and_bibw_count_every_message_in_the_window():
    case = Shape(1 << 20, window=64)
    assert kernel("bw").bandwidth_Bps(1e-3, case) == pytest.approx(64 * (1 << 20) / 1e-3)
    assert kernel("bibw").bandwidth_Bps(1e-3, case) == pytest.approx(2 * 64 * (1 << 20) / 1e-3)
    assert kernel("bw").latency(64e-6, case) == pytest.approx(1e-6)


def test_pingping_sample_is_one_exchange():
    k = kernel("pingping")
    assert k.latency(3e-6, Shape(8)) == 3e-6
    assert k.bandwidth_Bps(2e-6, Shape(8)) == pytest.approx(4e6)


def test_many_rank_rates_follow_imb_and_seed_definitions():
    ring = kernel("ring")
    # IMB Sendrecv moves 2n per rank, Exchange 4n; the seed-001 ring 2n per step for P steps.
    assert ring.bandwidth_Bps(1.0, Shape(10, ranks=4, pattern="sendrecv")) == 20
    assert ring.bandwidth_Bps(1.0, Shape(10, ranks=4, pattern="exchange")) == 40
    assert ring.bandwidth_Bps(1.0, Shape(10, ranks=4, pattern="ring")) == 80
    assert kernel("fanin").bandwidth_Bps(2.0, Shape(10, ranks=5)) == 20
    assert kernel("barrier").bandwidth_Bps(1.0, Shape(0, ranks=4)) is None


def test_collective_bandwidths_follow_nccl_tests():
    # algbw = S / t, S = n for reductions and bcast, n*p where each rank holds a block;
    # busbw = algbw * factor (nccl-tests doc/PERFORMANCE.md)
    expected = {"allreduce": (10, 1.5), "bcast": (10, 1.0), "reduce": (10, 1.0),
                "allgather": (40, 0.75), "alltoall": (40, 0.75), "reduce_scatter": (40, 0.75),
                "gather": (40, 0.75), "scatter": (40, 0.75)}
    for name, (algbw, factor) in expected.items():
        k = kernel(name)
        assert k.bandwidth_Bps(1.0, Shape(10, ranks=4)) == algbw, name
        assert k.meaning.bus_factor(4) == factor, name
    assert kernel("allreduce").meaning.bus_factor(2) == 1.0
    assert kernel("scan").meaning.bus_factor is None


def test_window_shrinks_to_keep_receiver_buffers_within_a_gibibyte():
    assert effective_window(64, 1 << 20) == 64
    assert effective_window(64, 1 << 25) == 32
    assert effective_window(64, 3 << 30) == 1
    bw = kernel("bw").meaning.memory
    assert bw(1 << 25, effective_window(64, 1 << 25), 2, {"recv_buffers": "window"}) == 33 << 25
    assert bw(1 << 25, effective_window(64, 1 << 25), 2, {"recv_buffers": "one"}) == 2 << 25


def test_params_are_checked_and_defaulted():
    assert params_for(kernel("reduce"), {"op": "user"}, 4) == {
        "root": "0", "op": "user", "dtype": "int"}
    assert params_for(kernel("bcast"), {"root": "rotate"}, 4) == {"root": "rotate"}
    with pytest.raises(UserError, match="--root 4: give a rank from 0 to 3, or rotate"):
        params_for(kernel("bcast"), {"root": "4"}, 4)
    with pytest.raises(UserError, match="--op prod: choose one of sum, max, min, user"):
        params_for(kernel("allreduce"), {"op": "prod"}, 2)
    with pytest.raises(UserError, match="parameter order: kernel ring takes pattern"):
        params_for(kernel("ring"), {"order": "rank"}, 2)
    with pytest.raises(UserError, match="not a whole number of double"):
        check_sizes(kernel("scan"), [8, 12], {"op": "sum", "dtype": "double"})


def test_modes():
    pp = kernel("pingpong")
    assert modes_for(pp, None) == ["standard"]
    assert modes_for(pp, "ready, buffered,ready") == ["ready", "buffered"]
    assert len(modes_for(pp, "all")) == 6
    with pytest.raises(UserError, match="unknown send mode 'fast'"):
        modes_for(pp, "standard,fast")
    with pytest.raises(UserError, match="no send modes"):
        modes_for(kernel("bw"), "standard")
    with pytest.raises(UserError, match="unknown kernel 'pong'"):
        kernel("pong")


def test_table_says_when_a_ci_is_missing_and_how_precise_each_median_is():
    from commscope.views.run import render

    base = {"kernel": "pingpong", "send_mode": "standard", "bytes": 8, "n": 4,
            "median_s": 1e-6, "ci_low_s": None, "ci_high_s": None, "p05_s": 9e-7,
            "p95_s": 2e-6, "bandwidth_MBps": 8.0, "precision": None, "capped": False,
            "launches": 1}
    from dataclasses import replace

    from commscope.stats.summary import of_medians
    cases = [replace(of_medians(()), **c) for c in (
        base, dict(base, bytes=1024, n=100, ci_low_s=9.8e-7, ci_high_s=1.02e-6,
                   precision=0.02, capped=True))]
    lines = render(cases, wide=True).splitlines()
    assert lines[2].split()[4:9] == ["1", "4", "1.000", "n<6", "-"]
    # the interval as a factor of the median, sqrt(1.02 / 0.98), never a +- percent
    assert lines[3].split()[4:9] == ["1", "100", "1.000", "0.980-1.020", "1.02*"]
    assert lines[2].split()[9] == "?"  # one launch: which spread dominates is unknown
    narrow = render(cases).splitlines()
    assert narrow[0].split() == ["kernel", "mode", "size", "time", "us", "95%", "CI", "us",
                                 "MB/s", "flags"]
    assert narrow[3].split()[4:6] == ["1.000", "0.980-1.020"]
    assert len(narrow) == 4 + 2  # the header, its rule, the rows, a legend of two lines
