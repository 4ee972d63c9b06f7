"""The protocol probe's search (probe.py) on synthetic latency curves with known switches:
located within 1% or 64 B, nothing found in noise alone, and not misled by a launch that
runs slower as a whole."""

from __future__ import annotations

import json
import os
import sqlite3

import numpy as np
import pytest
from conftest import EMBEDDED, commscope, one_line_error

from commscope.measure import probe

US = 1e-6


def curve(switches: list[tuple[int, float, float, float]]):
    """t(n) of protocols starting at each (first size, alpha s, bandwidth B/s, _)."""
    def t(n: int) -> float:
        start, alpha, bandwidth, _ = max((s for s in switches if s[0] <= n), key=lambda s: s[0])
        return alpha + n / bandwidth
    return t


# Open MPI shared memory with btl_sm_eager_limit 12000 as measured here: 0.2 us + 5 GB/s
# eagerly, a rendezvous from 11,9xx B, a slower one from 32,700 B on.
OPEN_MPI = [(0, 0.2 * US, 5e9, 0), (11930, 2.4 * US, 8e9, 0), (32700, 5.0 * US, 10e9, 0)]
# The same limit where the rendezvous copies once (CMA) and beats the eager path's two
# copies: the time falls at the switch (measured here: 8 KiB 2.31 us, 12 KiB 1.64 us).
SINGLE_COPY = [(0, 0.25 * US, 4e9, 0), (11950, 1.0 * US, 20e9, 0)]
CURVES = {"rises": (OPEN_MPI, (11930, 32700)), "falls": (SINGLE_COPY, (11950,))}


def launches(t, noise: float, slow: float, seed: int):
    """measure(): each call one launch, its every median off by `noise` (lognormal) and
    the whole launch slower by up to `slow`."""
    rng = np.random.default_rng(seed)
    made = []

    def measure(sizes):
        factor = 1 + slow * rng.random()
        made.append(sizes)
        return {n: t(n) * factor * float(np.exp(rng.normal(0, noise))) for n in sizes}
    return measure, made


@pytest.mark.parametrize("shape", CURVES)
@pytest.mark.parametrize("seed", range(20))
def test_switches_are_located_within_one_percent(seed, shape):
    protocols, at = CURVES[shape]
    measure, made = launches(curve(protocols), 0.02, 0.5, seed)
    found = probe.probe(measure, probe.ladder())
    located = [(b.lo, b.hi) for b in found.switches if b.located]
    assert len(located) == len(found.switches) == len(at), found.switches
    for (lo, hi), true in zip(located, at):
        assert lo < true <= hi  # the switch lies in the reported interval
        assert hi - lo <= max(0.01 * hi, probe.MIN_WIDTH)
    assert len(made) <= 1 + 3  # the coarse round, ~8x narrower a round, and a check


def test_launches_in_the_states_measured_here_locate_the_switch():
    """Open MPI's shared memory, 12000 B eager limit, as 20 launches here on 2026-11-27
    ran: in a third the eager path rose on its line (11,776 B in 1.7 us), in most it ran
    2-3.5x slower near the limit through the launch (11,871 B in 4.2-4.8 us) and still
    stepped to the rendezvous, and in a few it varied 3-9x from size to size, above the
    rendezvous as often as below. 200 probes with the limit looked for: the switch is
    located within 1% in all but 2 (the search before this one: 24 of 200)."""
    eager_limit = probe.Setting("btl_sm_eager_limit", 12_000)
    missed = 0
    for seed in range(200):
        rng = np.random.default_rng(seed)

        def measure(sizes):
            state = rng.choice(3, p=[0.3, 0.6, 0.1])
            slower = rng.uniform(2.0, 3.5)
            t = {}
            for n in sizes:
                if n < 11930:
                    t[n] = 0.2 * US + n / 12e9
                    if n > 6144:
                        t[n] *= (1.0, slower, rng.uniform(3, 9))[state]
                else:
                    t[n] = 2.4 * US + n / 3e9 if n < 32700 else 5 * US + n / 10e9
                t[n] *= float(np.exp(rng.normal(0, 0.02)))
            return t
        found = probe.probe(measure, probe.ladder(), lambda: [eager_limit])
        at = [b for b in found.switches if probe.named_by(b, [eager_limit])]
        missed += not (len(at) == 1 and at[0].located and at[0].lo < 11930 <= at[0].hi)
    assert missed <= 2


def test_noise_alone_has_no_switch():
    """A single protocol measured with 3% noise per median and launches up to 50% slower:
    no switch in at least 95% of 200 probes."""
    t = curve([(0, 0.3 * US, 6e9, 0)])
    found = [probe.probe(launches(t, 0.03, 0.5, seed)[0], probe.ladder()).switches
             for seed in range(200)]
    assert sum(bool(s) for s in found) <= 10


def test_a_jump_unseen_in_the_next_launches_is_dropped():
    flat = {2048: 1e-6, 3072: 1e-6}
    calls = iter([{0: 1e-6, 1024: 1e-6, 2048: 1e-6, 3072: 2e-6, 4096: 2e-6, 6144: 2e-6},
                  *[flat] * probe.MAX_MISSES])
    found = probe.probe(lambda sizes: _lookup(calls, sizes), [0, 1024, 2048, 3072, 4096, 6144])
    assert not found.switches and [b.hi for b in found.unconfirmed] == [3072]


@pytest.mark.parametrize("state", [
    lambda n: 4e-6,  # the step gone
    lambda n: 4.5e-6 if n < 2600 else 5.0e-6])  # the eager path 4.5x slower, a step of 11%
def test_a_launch_in_another_state_does_not_drop_the_switch(state):
    """A launch whose shared-memory path runs 2-4x slower, as a few here did: at the
    bracket's ends it shows no step, or one no larger than noise, which says nothing of
    where the switch lies."""
    calls = []

    def measure(sizes):
        calls.append(sizes)
        t = state if len(calls) == 2 else (lambda n: 1e-6 if n < 2600 else 2e-6)
        return {n: t(n) for n in sizes}
    found = probe.probe(measure, [0, 1024, 2048, 3072, 4096, 6144])
    (switch,) = found.switches
    assert switch.lo < 2600 <= switch.hi and switch.located


def _lookup(calls, sizes):
    table = next(calls)
    return {n: table.get(n, 1e-6) for n in sizes}


def test_a_bandwidth_regime_is_not_a_jump():
    """Times that turn from flat to bandwidth-bound (no jump) and a cache-size change of
    slope: the ladder's steps are explained by the lines on their sides."""
    def t(n):
        return 0.3 * US + n / 5e9 + max(0, n - (1 << 20)) / 3e9
    assert probe.jumps(probe.ladder(), [t(n) for n in probe.ladder()]) == []


def test_settings_name_a_switch_up_to_a_header_below_them():
    b = probe.Bracket(11_900, 11_990, *(probe.Regime(0, 1, 0.0, 0.0),) * 2, 1e-6, 0.0, 0.0)
    sm = probe.Setting("btl_sm_eager_limit", 12_000)
    assert probe.named_by(b, [sm]) == [sm]
    assert probe.named_by(b, [probe.Setting("x", 16_384), probe.Setting("y", 11_000)]) == []


def test_the_settings_that_apply_to_a_path():
    ompi = {"btl_sm_eager_limit": 4096, "btl_sm_rndv_eager_limit": 32768,
            "btl_tcp_eager_limit": 65536}
    applies, limits = probe.protocol_settings("Open MPI", ompi, over_network=False)
    assert [s.name for s in applies] == ["btl_sm_eager_limit", "btl_sm_rndv_eager_limit"]
    assert [s.name for s in limits] == ["btl_sm_eager_limit"]
    mpich = {"MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD": 8192, "MPIR_CVAR_CH4_OFI_EAGER_THRESHOLD": -1}
    applies, limits = probe.protocol_settings("MPICH", mpich, over_network=True)
    assert applies == [] and limits == []  # -1: the provider's own limit, not a size
    assert probe.protocol_settings("MPICH", None, False) == ([], [])


def test_the_ladder():
    assert probe.ladder(64) == [0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]


# The real libraries, each with a limit set to a size no ladder holds: the probe finds the
# switch within 1% of it, names the setting, and stores its rounds as runs.
# MPICH 5.0.2 on this machine does not step at its CMA threshold in every launch: with it
# at 100,000 B, 99,999 B took 32 us in 1 of 6 launches and 13-16 us, as CMA's 100,000 B,
# in the other 5. There the probe must say the setting showed no step, and name no switch
# after it.
LIMITS = {"openmpi": ("OMPI_MCA_btl_sm_eager_limit", "btl_sm_eager_limit", 12_000),
          "mpich": ("MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD",
                    "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD", 20_000)}


def probed(mpi_prefix, db, variable, value, *flags, may_miss=False):
    """The probe's JSON and whether it said the set limit showed no step (exit 1, as for
    any limit that shows none: MPICH's shared-memory queue cell once did not under load);
    only where may_miss."""
    done = commscope("probe", "protocols", "--mpi", mpi_prefix, "--db", db, "--json", *flags,
                     env={**os.environ, variable: str(value)})
    assert done.returncode in (0, 1), done.stderr
    found = json.loads(done.stdout)
    missed = [d for p in found["probes"] for d in p["disagreements"]]
    assert (done.returncode == 1) == bool(missed), found
    ours = [d for d in missed if d.startswith(variable.removeprefix("OMPI_MCA_"))]
    assert may_miss or not ours, missed
    return found, bool(ours)


def the_switch_at(found: dict, setting: str, value: int, confirmed: bool = True) -> dict:
    """The switch named for `setting`, at `value`; `confirmed`: seen in enough launches
    (MPICH's, which may be missed altogether on this host (may_miss), may also be found
    at the setting without the launches to confirm it: seen once in a CI run)."""
    named = [s for s in found["switches"] if setting in s["settings"]]
    assert len(named) == 1, found
    switch = named[0]
    first, last = switch["interval"]
    assert first <= switch["bytes"] == last and (switch["located"] or not confirmed)
    assert abs(switch["bytes"] - value) <= 0.01 * value, switch
    assert last - first < max(0.01 * last, probe.MIN_WIDTH)
    return switch


def test_the_shared_memory_switch_is_found_at_the_setting(mpi_prefix, db):
    variable, setting, value = LIMITS["openmpi" if mpi_prefix == EMBEDDED else "mpich"]
    found, missed = probed(mpi_prefix, db, variable, value, may_miss=mpi_prefix != EMBEDDED)
    (one,) = found["probes"]
    assert one["library_settings"][setting] == value and one["path"] == "shared memory"
    if missed:
        assert not [s for s in one["switches"] if setting in s["settings"]], one
    else:
        the_switch_at(one, setting, value, confirmed=mpi_prefix == EMBEDDED)
    runs = sqlite3.connect(db).execute("SELECT id, status FROM runs").fetchall()
    assert runs == [(r, "complete") for r in one["runs"]] and len(runs) >= 2


@pytest.mark.mpi
def test_the_tcp_switch_is_found_at_the_setting(db):
    found, _ = probed(EMBEDDED, db, "OMPI_MCA_btl_tcp_eager_limit", 30_000, "--transport", "tcp")
    (one,) = found["probes"]
    assert one["path"] == "network"
    the_switch_at(one, "btl_tcp_eager_limit", 30_000)


@pytest.mark.parametrize("flags, named", [(["--np", "2,4"], "--np"),
                                          (["--sizes", "1K,2K"], "--sizes"),
                                          (["--modes", "eager"], "eager")])
def test_bad_probe_input_is_refused_before_launch(fake_mpi, db, flags, named):
    line = one_line_error(commscope("probe", "protocols", "--mpi", fake_mpi, "--db", db,
                                    *flags))
    assert named in line
    assert not db.exists() or not sqlite3.connect(db).execute("SELECT * FROM runs").fetchall()
