"""mpiP reports of each version and MPIP option that changes what is printed (LLNL/mpiP
report.c and util.c, 3.4.1 and 3.5), each written in tests/data/profiles/mpip-variants/
from mpiP's printf formats with made-up figures, read row by row or refused in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from commscope.importers import parse
from conftest import commscope, one_line_error

VARIANTS = Path(__file__).parent / "data" / "profiles" / "mpip-variants"

# fixture -> (version, wall_s, [(rank, call, comm_size, bytes, count, time_s, bytes_sum)])
READ = {
    # 3.4.1: "Aggregate Time" without its Count column; -y: a collective histogram whose
    # bin 0-7 holds the 2 tasks; Send's mean 1.049e+06 read as up to 1049500 -> 2^20
    "mpip-3.4.1-y-np2.txt": ("3.4.1", (5.01, 5.02), [
        (0, "MPI_Allreduce", 2, 8, 50, 0.010, 400),
        (0, "MPI_Send", 2, 1048576, 20, 0.102, 20970000),
        (1, "MPI_Allreduce", 2, 8, 50, 0.015, 400),
        (1, "MPI_Recv", 2, 0, 20, 0.100, None)]),
    # -e: %f figures; a mean of 4095.5000 is below 4096 (bucket 2048), 4096.0000 is not;
    # -k 0: no Callsites section, one site per call
    "mpip-3.5.0-e-k0-np2.txt": ("3.5.0", (3.01, 3.02), [
        (0, "MPI_Allreduce", 2, 16, 10, 0.00125, 160),
        (0, "MPI_Isend", 2, 2048, 2, 0.00002, 8191),
        (0, "MPI_Waitall", 2, 0, 10, 0.020, None),
        (1, "MPI_Allreduce", 2, 16, 10, 0.00075, 160),
        (1, "MPI_Isend", 2, 4096, 2, 0.00002, 8192),
        (1, "MPI_Waitall", 2, 0, 10, 0.040, None)]),
    # -l: the sections written task by task; -p: "No point to point operations to report"
    "mpip-3.5.0-l-y-p-np2.txt": ("3.5.0", (2.51, 2.52), [
        (0, "MPI_Barrier", 2, 0, 1, 0.0003, None),
        (0, "MPI_Bcast", 2, 32768, 8, 0.048, 262100),
        (1, "MPI_Barrier", 2, 0, 1, 0.0004, None),
        (1, "MPI_Bcast", 2, 32768, 8, 0.032, 262100)]),
}
# fixture -> what its one-line refusal names
REFUSED = {"mpip-3.5.0-c-np2.txt": ("a concise report (MPIP -c)",
                                    "'Callsite Time statistics (all callsites, milliseconds)'",
                                    "record again without -c"),
           "mpip-3.5.0-d-np2.txt": ("no 'Callsite Time statistics (all, milliseconds)'",
                                    "MPIP -d", "record again without -d")}


def test_every_mpip_variant_fixture_is_held():
    assert sorted(p.name for p in VARIANTS.iterdir()) == sorted([*READ, *REFUSED])


@pytest.mark.parametrize("name", READ)
def test_an_mpip_variant_is_read_field_by_field(name):
    version, wall_s, rows = READ[name]
    (profile,) = parse(VARIANTS / name)
    found = [(r.rank, r.call, r.comm_size, r.bytes, r.count, r.time_s, r.bytes_sum)
             for r in profile.rows]
    assert [row[:5] + row[6:] for row in found] == [row[:5] + row[6:] for row in rows]
    assert [row[5] for row in found] == pytest.approx([row[5] for row in rows], rel=1e-12)
    assert all(r.peer is None for r in profile.rows)
    assert (profile.ranks, profile.wall_s, profile.source["version"]) == (2, wall_s, version)
    assert profile.program[0] == "./pair"


@pytest.mark.parametrize("name", REFUSED)
def test_an_mpip_variant_without_rank_lines_is_refused_in_one_line(tmp_path, name):
    error = one_line_error(commscope("import", VARIANTS / name, "--db", tmp_path / "r.db"))
    assert str(VARIANTS / name) in error and all(part in error for part in REFUSED[name])
