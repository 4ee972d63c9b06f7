"""The collectives the guidelines need (the v-forms with equal counts, reduce_scatter_block,
exscan) and every mock-up (--as: a collective's job done by other MPI calls), validated
like the collectives themselves on both MPIs (docs/guidelines.md)."""

import json
import sqlite3

import pytest

from conftest import EMBEDDED, commscope, one_line_error
from commscope.system.kernels import catalog
from commscope.system.mpi import find_mpi

QUICK = ["--iters", "6", "--validate", "--launches", "1"]
NEW = ["gatherv", "scatterv", "allgatherv", "alltoallv", "reduce_scatter_block", "exscan"]
ROOTED = {"bcast", "scatter", "gather", "reduce", "gatherv", "scatterv"}
# Each kernel's mock-ups, as its --describe entry declares them (one owner: the kernel).
MOCKUPS = {"allreduce": ["reduce+bcast", "reduce_scatter_block+allgather"],
           "bcast": ["scatter+allgather"],
           "allgather": ["gather+bcast", "alltoall", "allreduce", "allgatherv"],
           "gather": ["allgather", "gatherv"], "scatter": ["bcast", "scatterv"],
           "reduce": ["allreduce"], "reduce_scatter": ["allreduce"],
           "reduce_scatter_block": ["reduce+scatter"], "scan": ["exscan+reduce_local"],
           "alltoall": ["alltoallv"], "pingping": ["sendrecv", "isend+irecv"]}


def run(mpi_prefix, db, *args):
    done = commscope("run", *args, *QUICK, "--mpi", mpi_prefix, "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["cases"], done


def test_each_collective_declares_its_mockups():
    known = catalog(find_mpi(str(EMBEDDED)))
    declared = {name: list(k.params["as"].choices) for name, k in known.kernels.items()
                if "as" in k.params}
    assert declared == MOCKUPS
    assert all(known.kernel(name).params["as"].default is None for name in MOCKUPS)


def test_an_unknown_mockup_is_refused_before_launch(db):
    line = one_line_error(commscope("run", "allreduce", "--as", "bcast+reduce", "--db", db))
    assert "reduce+bcast" in line and "reduce_scatter_block+allgather" in line
    assert not db.exists()


@pytest.mark.mpi
@pytest.mark.parametrize("name", NEW)
def test_the_new_collectives(mpi_prefix, db, name):
    """3 ranks, the root rotating (a persistent request per root), plain and MPI-4
    persistent (MPI_Gatherv_init, ...), both in one launch."""
    root = ["--root", "rotate"] if name in ROOTED else []
    cases, _ = run(mpi_prefix, db, name, "--np", 3, "--sizes", "0,8,1K,64K", *root,
                   "--each", "persistent=no,yes")
    for form in ("no", "yes"):
        these = [c for c in cases if c["params"].get("persistent", "no") == form]
        assert sorted(c["bytes"] for c in these) == [0, 8, 1024, 65536], form
    assert all(c["ranks"] == 3 and c["n"] == 6 and c["validated"] for c in cases)


@pytest.mark.mpi
@pytest.mark.parametrize("name", MOCKUPS)
def test_each_mockup_gives_the_collectives_result(mpi_prefix, db, name):
    # 3 ranks, root 1: an odd count, and a root that is neither rank 0 (where the
    # reduce+scatter and gather+bcast mock-ups gather) nor the last. Sizes are whole
    # thirds of whole ints, so every mock-up that splits a block can.
    root = ["--root", "1"] if name in ROOTED else []
    np = 2 if name == "pingping" else 3
    cases, _ = run(mpi_prefix, db, name, "--np", np, "--each", f"as={','.join(MOCKUPS[name])}",
                   "--sizes", "0,96,12K", *root)
    for mockup in MOCKUPS[name]:  # each its own case, validated, in the one launch
        assert sorted(c["bytes"] for c in cases if c["params"]["as"] == mockup) == \
            [0, 96, 12288], mockup
    assert len(cases) == 3 * len(MOCKUPS[name])
    assert all(c["n"] == 6 and c["validated"] for c in cases)


@pytest.mark.mpi
def test_a_mockup_that_cannot_split_a_size_skips_it(mpi_prefix, db):
    cases, done = run(mpi_prefix, db, "allreduce", "--np", 3,
                      "--as", "reduce_scatter_block+allgather", "--sizes", "96,100")
    assert [c["bytes"] for c in cases] == [96]
    (reason,) = sqlite3.connect(db).execute("SELECT reason FROM skips WHERE bytes = 100")
    assert reason == ("25 elements do not split into 3 equal parts, as this mock-up needs",)


@pytest.mark.mpi
def test_a_mockup_has_no_persistent_form(mpi_prefix, db):
    done = commscope("run", "reduce", "--as", "allreduce", "--persistent", "--sizes", "8",
                     *QUICK, "--mpi", mpi_prefix, "--db", db)
    (reason,) = sqlite3.connect(db).execute("SELECT reason FROM skips")
    assert reason == ("a mock-up (--as) has no persistent form",), done.stderr
