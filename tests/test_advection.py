"""`commscope app advection2d`: the solver is right (order, exact fields, stability) and timed."""

import json
import math
import sqlite3
import subprocess

import numpy as np
import pytest

from commscope.system.build import native_binary
from commscope.system.launcher import Placement, launch
from commscope.system.mpi import find_mpi
from conftest import EMBEDDED, commscope, one_line_error


def app(mpi_prefix, db, *args) -> dict:
    done = commscope("app", "advection2d", "--mpi", mpi_prefix, "--db", db, "--iters", 1,
                     "--json", *args)
    assert done.returncode == 0, done.stderr
    (case,) = json.loads(done.stdout)["cases"]
    return case


def field(path, n) -> np.ndarray:
    return np.fromfile(path, dtype="<f8").reshape(n, n)  # row-major, y outer


def beam_warming_weights(nu):
    """Q_i, Q_{i-1}, Q_{i-2} (upwind) for Courant number nu (LeVeque 2002, ch. 6)."""
    return (1 - nu) * (2 - nu) / 2, nu * (2 - nu), nu * (nu - 1) / 2


def amplification(nu, theta):
    """Von Neumann factor of one sweep for the mode exp(i j theta), velocity > 0."""
    w0, w1, w2 = beam_warming_weights(nu)
    return w0 + w1 * np.exp(-1j * theta) + w2 * np.exp(-2j * theta)


def gauss(x, y):
    return np.exp((np.cos(x - np.pi) + np.cos(y - np.pi) - 2) / 0.5**2)


def serial_solve(n, u, v, dt, steps):
    """The same scheme, serial and independent of the C code: x sweep, then y sweep."""
    h = 2 * np.pi / n
    x = np.arange(n) * h
    c = gauss(x[None, :], x[:, None])
    for _ in range(steps):
        for vel, axis in ((u, 1), (v, 0)):
            w0, w1, w2 = beam_warming_weights(abs(vel) * dt / h)
            s = 1 if vel > 0 else -1  # np.roll by +1 brings Q_{i-1} to i
            c = w0 * c + w1 * np.roll(c, s, axis) + w2 * np.roll(c, 2 * s, axis)
    return c


def test_von_neumann_beam_warming_is_stable_up_to_courant_2():
    """docs/app-advection2d.md: per direction, |g| <= 1 exactly for 0 <= nu <= 2."""
    theta = np.linspace(0, 2 * np.pi, 2001)
    for nu in np.linspace(0, 2, 81):
        assert np.abs(amplification(nu, theta)).max() <= 1 + 1e-12, nu
    for nu in (2.05, 2.5, -0.1):
        assert np.abs(amplification(nu, theta)).max() > 1.001, nu


@pytest.mark.mpi
@pytest.mark.parametrize("u", [0.5, -0.7])
def test_native_solve_has_the_von_neumann_factor(db, u):
    """sin(x) is one Fourier mode: after S steps the C solution is Im(g^S e^{ix}), so its
    RMS error is |g^S - e^{-iuT}| / sqrt(2), g the factor above (mirrored for u < 0)."""
    n, steps, dt = 32, 15, 0.05
    case = app(EMBEDDED, db, "--n", n, "--u", u, "--v", 0, "--dt", dt, "--steps", steps,
               "--init", "sin", "--np", 2)
    g = amplification(abs(u) * dt / (2 * np.pi / n), 2 * np.pi / n)
    g = g if u > 0 else np.conj(g)
    predicted = abs(g**steps - np.exp(-1j * u * steps * dt)) / math.sqrt(2)
    assert case["l2_error"] == pytest.approx(predicted, rel=1e-9)


@pytest.mark.mpi
def test_second_order_convergence(db):
    """Fixed CFL number 0.5 and final time 1: each halving of dx quarters the L2 error."""
    errors = []
    for n in (64, 128, 256):
        h = 2 * np.pi / n
        steps = math.ceil(1.0 / (0.5 / (0.5 / h + 0.3 / h)))
        case = app(EMBEDDED, db, "--n", n, "--u", 0.5, "--v", -0.3, "--dt", repr(1.0 / steps),
                   "--steps", steps, "--init", "gauss", "--np", 4)
        errors.append(case["l2_error"])
        assert case["final_time"] == pytest.approx(1.0)
    orders = [math.log2(a / b) for a, b in zip(errors, errors[1:])]
    assert all(order > 1.8 for order in orders), (errors, orders)


@pytest.mark.parametrize("u, v", [(0.5, -0.3), (-0.4, 0.6)])
def test_p2p_and_rma_give_the_same_field(mpi_prefix, db, tmp_path, u, v):
    n, steps, dt = 48, 12, 0.04
    fields = {}
    for method in ("p2p", "rma"):
        path = tmp_path / f"{method}.bin"
        app(mpi_prefix, db, "--n", n, "--u", u, "--v", v, "--dt", dt, "--steps", steps,
            "--init", "gauss", "--method", method, "--np", 4, "--field", path)
        fields[method] = field(path, n)
    assert np.abs(fields["p2p"] - fields["rma"]).max() <= 1e-12
    assert np.abs(fields["rma"] - serial_solve(n, u, v, dt, steps)).max() <= 1e-12


def test_one_two_and_four_ranks_give_the_same_field(mpi_prefix, db, tmp_path):
    n, steps, dt, u, v = 40, 10, 0.05, -0.5, 0.35
    reference = serial_solve(n, u, v, dt, steps)
    for ranks, grid in ((1, "1x1"), (2, "2x1"), (2, "1x2"), (4, "2x2")):
        path = tmp_path / f"{grid}.bin"
        case = app(mpi_prefix, db, "--n", n, "--u", u, "--v", v, "--dt", dt, "--steps", steps,
                   "--init", "gauss", "--np", ranks, "--grid", grid, "--field", path)
        assert case["process_grid"] == [int(p) for p in grid.split("x")]
        assert case["points_per_rank"] == n * n // ranks
        assert np.abs(field(path, n) - reference).max() <= 1e-12, grid


@pytest.mark.mpi
def test_negative_velocities_mirror_positive_ones(db, tmp_path):
    """The bump is symmetric about (pi, pi): solving with (-u, -v) gives the mirror image."""
    n, steps, dt = 64, 20, 0.02
    runs = {}
    for sign in (1, -1):
        path = tmp_path / f"{sign}.bin"
        case = app(EMBEDDED, db, "--n", n, "--u", sign * 0.6, "--v", sign * 0.4, "--dt", dt,
                   "--steps", steps, "--init", "gauss", "--np", 4, "--field", path)
        runs[sign] = case, field(path, n)
    mirror = np.roll(runs[1][1][::-1, ::-1], 1, axis=(0, 1))  # x_i -> x_{(n - i) mod n}
    assert np.abs(runs[-1][1] - mirror).max() <= 1e-12
    assert runs[-1][0]["l2_error"] < 5e-3
    assert runs[-1][0]["l2_error"] == pytest.approx(runs[1][0]["l2_error"], rel=1e-9)


@pytest.mark.mpi
def test_no_comm_is_wrong_and_timed_in_the_store(db):
    args = ("--n", 64, "--steps", 30, "--init", "sin", "--np", 4)
    right, wrong = app(EMBEDDED, db, *args), app(EMBEDDED, db, *args, "--no-comm")
    assert right["l2_error"] < 2e-3 and wrong["l2_error"] > 50 * right["l2_error"]
    assert set(wrong["phase_median_s"]) == {"compute", "communicate"}
    assert right["cfl"] == pytest.approx(0.5)  # the default dt
    con = sqlite3.connect(db)
    kernels = [row[0] for row in con.execute("SELECT kernel FROM cases")]
    assert kernels == ["advection2d", "advection2d"]


@pytest.mark.mpi
def test_table_shows_time_and_error(db):
    done = commscope("app", "advection2d", "--n", 32, "--steps", 5, "--np", 2, "--iters", 6,
                     "--method", "p2p", "--db", db)
    assert done.returncode == 0, done.stderr
    header, _, row = done.stdout.splitlines()[1:4]
    assert header.split()[:3] == ["method", "comm", "n"] and "L2 error" in header
    assert row.split()[:4] == ["p2p", "on", "32", "2x1"]
    assert "n<6" not in row  # 6 solves: a 95% CI of the median


@pytest.mark.parametrize("args, says", [
    (["--n", 64, "--dt", 0.1], "--dt 0.1: CFL number 1.019 > 1 is unstable; the largest "
                               "stable dt is 0.0981748"),
    (["--n", 63, "--np", 4], "--n 63: not divisible by the 2x2 process grid"),
    (["--np", 4, "--grid", "3x1"], "--grid 3x1: 3x1 is 3 ranks, but --np is 4"),
    (["--grid", "two"], "--grid two: give PXxPY"),
    (["--n", 0], "--n 0: give a positive number"),
    (["--n", 2, "--np", 4], "fewer than 2 points per rank"),
    (["--init", "cos"], "--init cos: choose one of sin, gauss"),
])
def test_bad_problem_is_one_clear_line(tmp_path, args, says):
    line = one_line_error(commscope("app", "advection2d", *args, cwd=tmp_path))
    assert says in line
    assert not (tmp_path / "commscope.db").exists()


def test_run_and_sweep_refuse_the_app(tmp_path):
    line = one_line_error(commscope("run", "advection2d", cwd=tmp_path))
    assert "run it with `commscope app advection2d`" in line
    plan = tmp_path / "plan.toml"
    plan.write_text("[[experiment]]\nkernel = 'advection2d'\n")
    line = one_line_error(commscope("sweep", plan, cwd=tmp_path))
    assert "run it with `commscope app advection2d`" in line
    assert not (tmp_path / "commscope.db").exists()


@pytest.mark.mpi
@pytest.mark.parametrize("ranks, params, says", [
    (1, ["dt=0.1"], "CFL number 1.01859 > 1: unstable (dt=0.1)"),
    (3, ["grid=3x1"], "n=64 is not divisible by the process grid 3x1"),
])
def test_native_side_checks_again(ranks, params, says):
    """What Python refuses, the kernel refuses on its own (a plan written by hand)."""
    mpi = find_mpi(str(EMBEDDED))
    args = ["--kernel", "advection2d", "--sizes", str(8 * 64 * 64), "--iters", "1"]
    how = launch(mpi, ranks, native_binary(mpi),
                 args + [a for p in params for a in ("--param", p)], Placement())
    done = subprocess.run(how.argv, env=how.env, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert done.returncode != 0
    assert says in done.stdout + done.stderr
