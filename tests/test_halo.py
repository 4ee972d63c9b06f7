"""The halo kernel: every method validated on 1x1, 1x2, 2x2 and 1x4 process grids, on both MPIs;
its parameters checked before launch."""

import json
import sqlite3

import pytest

from commscope.system.errors import UserError
from commscope.system.kernels import catalog
from commscope.system.mpi import find_mpi
from commscope.measure.params import Names, params_for
from commscope.measure.sweep import load
from conftest import EMBEDDED, commscope, one_line_error

METHODS = ["p2p", "sendrecv", "neighbor", "rma"]
# (np, grid, tile, width): non-square tiles; 1-wide and 2-wide dimensions make a rank its own
# neighbour, or both neighbours of a dimension the same rank.
GRIDS = [(1, "auto", "5x3", 2), (2, "1x2", "6x4", 2), (4, "2x2", "7x5", 1), (4, "1x4", "5x3", 2)]


@pytest.mark.mpi
@pytest.mark.parametrize("np_, grid, tile, width", GRIDS)
def test_every_method_fills_every_ghost_cell(mpi_prefix, db, np_, grid, tile, width):
    """Every method in one launch of the grid (--each), each its own case, validated."""
    done = commscope("run", "halo", "--np", np_, "--grid", grid, "--tile", tile, "--halo", width,
                     "--each", "method=" + ",".join(METHODS), "--iters", 5, "--launches", 1,
                     "--validate", "--mpi", mpi_prefix, "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    cases = json.loads(done.stdout)["cases"]
    assert sorted(c["params"]["method"] for c in cases) == sorted(METHODS)
    nx, ny = map(int, tile.split("x"))
    for case in cases:
        assert case["validated"] and case["n"] == 5 and case["ranks"] == np_
        assert case["bytes"] == 16 * width * (nx + ny)  # W columns of NY, W rows of NX, both ways
        assert case["params"] == {"tile": tile, "halo": str(width),
                                  "method": case["params"]["method"], "grid": grid}
    for (e,) in sqlite3.connect(db).execute("SELECT extra FROM cases"):
        extra = json.loads(e)
        assert extra["grid"] == ([1, 1] if grid == "auto" else list(map(int, grid.split("x"))))
        assert extra["tile"] == [nx, ny] and extra["halo_width"] == width


@pytest.mark.mpi
def test_grid_auto_is_mpi_dims_create(db):
    done = commscope("run", "halo", "--np", 2, "--tile", "4x4", "--iters", 5, "--launches", 1,
                     "--db", db,
                     "--json")
    assert done.returncode == 0, done.stderr
    (extra,) = [json.loads(e) for (e,) in sqlite3.connect(db).execute("SELECT extra FROM cases")]
    assert extra["grid"] == [2, 1]  # MPI_Dims_create(2, 2): the larger dimension first


@pytest.mark.parametrize("args, message", [
    (["--np", 4, "--param", "grid=3x2"],
     "--grid 3x2: a 3x2 process grid is 6 ranks, but the run has 4; give PXxPY with PX*PY = 4"),
    (["--np", 2, "--grid", "2by1"], "--grid 2by1: give PXxPY (e.g. 2x2) or auto"),
    (["--tile", "16"], "--tile 16: give NXxNY interior points per rank"),
    (["--tile", "0x8"], "--tile 0x8: give NXxNY interior points per rank"),
    (["--tile", "16x4", "--halo", 5], "--halo 5: give a ghost width from 1 to 4"),
    (["--halo", 0], "--halo 0: give a ghost width from 1 to 256"),
    (["--method", "put"], "--method put: choose one of p2p, sendrecv, neighbor, rma"),
    (["--sizes", "8"], "--sizes: halo's bytes follow from its parameters; drop --sizes"),
])
def test_bad_parameters_are_refused_with_one_line(db, args, message):
    line = one_line_error(commscope("run", "halo", *args, "--db", db))
    assert message in line
    assert not db.exists()  # refused before anything was launched or stored


def test_bytes_and_defaults():
    k = catalog().kernel("halo")
    assert params_for(k, {}, 4) == {"tile": "256x256", "halo": "1", "method": "p2p",
                                    "grid": "auto"}
    assert k.meaning.fixed_bytes({"tile": "256x128", "halo": "2"}, Names().param) \
        == 16 * 2 * (256 + 128)
    with pytest.raises(UserError, match="plan.toml: params.grid 2x2: a 2x2 process grid is 4"):
        params_for(k, {"grid": "2x2"}, 3, Names("plan.toml: ", flags=False))


def test_a_sweep_takes_its_bytes_from_tile_and_halo(tmp_path):
    path = tmp_path / "plan.toml"
    path.write_text("[[experiment]]\nkernel = 'halo'\nnp = [2, 4]\n"
                    "params = { tile = '8x4', halo = [1, 2], method = ['p2p', 'rma'] }\n")
    plan = load(path, find_mpi(str(EMBEDDED)))
    assert len(plan.points) == 2 * 2 * 2
    assert {(p.ranks, p.params["halo"], tuple(p.sizes)) for p in plan.points} \
        == {(r, w, (16 * int(w) * 12,)) for r in (2, 4) for w in ("1", "2")}
    path.write_text("[[experiment]]\nkernel = 'halo'\nsizes = '8'\n")
    line = one_line_error(commscope("sweep", path, "--db", tmp_path / "r.db"))
    assert "halo's bytes follow from its params; drop sizes" in line
    path.write_text("[[experiment]]\nkernel = 'halo'\nnp = 3\nparams = { grid = '2x2' }\n")
    line = one_line_error(commscope("sweep", path, "--db", tmp_path / "r.db"))
    assert "params.grid 2x2: a 2x2 process grid is 4 ranks, but the run has 3" in line
