"""The other tools' outputs as the field keeps them (issue 61): inside a longer log (a job's
header, a prompt and the mpirun line before, a markdown fence round it, text after), with
CRLF line ends and an
editor's byte-order mark, without the lines older versions lack, and IMB's units by its
version. Each fixture is written here from the tools' printed line shapes, and each
import is held figure by figure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commscope.importers import parse

from conftest import commscope

DATA = Path(__file__).parent / "data" / "imports"
LOG_BEFORE = "#!/bin/bash\n#SBATCH -N 2\n$ srun --mpi=pmix -n 2 ./bench\n```text\n"
LOG_AFTER = "```\nsrun: job 12345 completed\n$ exit\n"


def _in_a_log(text: str, crlf: bool = False, bom: bool = False) -> str:
    whole = LOG_BEFORE + text + LOG_AFTER
    return ("\ufeff" if bom else "") + (whole.replace("\n", "\r\n") if crlf else whole)


def _figures(runs) -> list:
    return [(r.tool, r.benchmark, r.kernel, r.ranks,
             [(row.bytes, row.figures, row.printed) for row in r.rows]) for r in runs]


@pytest.mark.parametrize("name", ["osu-7.2_latency.txt", "osu-7.2_bcast_np4_full.txt",
                                  "imb_p2p.txt", "rccl-tests_all_reduce_perf.txt"])
@pytest.mark.parametrize("crlf, bom", [(False, False), (True, False), (False, True),
                                       (True, True)])
def test_an_output_inside_a_log_imports_as_the_output_alone(tmp_path, name, crlf, bom):
    original = DATA / name
    logged = tmp_path / name
    logged.write_bytes(_in_a_log(original.read_text(), crlf, bom).encode())
    assert _figures(parse(logged)) == _figures(parse(original))


def test_nccl_tests_without_a_version_line_or_a_test_line_import(tmp_path):
    """Older nccl-tests start at '# nThread'; the test is named by the file's name then."""
    lines = (DATA / "rccl-tests_all_reduce_perf.txt").read_text().splitlines(keepends=True)
    older = "".join(line for line in lines if not line.startswith(
        ("# Collective test starting", "rccl-tests: Version")))
    path = tmp_path / "all_reduce_perf.out"
    path.write_text(_in_a_log(older))
    (run,) = parse(path)
    (whole,) = parse(DATA / "rccl-tests_all_reduce_perf.txt")
    assert (run.version, run.benchmark, run.kernel, run.ranks) == ("", "all_reduce_perf",
                                                                  "allreduce", 2)
    assert _figures([run])[0][4] == _figures([whole])[0][4]


IMB_41 = """#------------------------------------------------------------
#    Intel (R) MPI Benchmarks 4.1, MPI-1 part
#------------------------------------------------------------
# Date                  : Mon Jan  4 10:00:00 2016
# MPI Version           : 3.0

#---------------------------------------------------
# Benchmarking PingPong
# #processes = 2
#---------------------------------------------------
       #bytes #repetitions      t[usec]   Mbytes/sec
            0         1000         0.71         0.00
      4194304           10      2967.49      1347.94


# All processes entering MPI_Finalize

"""


def test_imb_before_2018_prints_mebibytes_and_they_are_stored_as_megabytes(tmp_path):
    """IMB 4.1's Mbytes/sec is 2^20 bytes a second (4194304 B in 2967.49 us printed
    1347.94); 2018 and later print 10^6. Its banner reads 'Intel (R)'."""
    path = tmp_path / "imb41.txt"
    path.write_text(IMB_41)
    (run,) = parse(path)
    assert (run.version, run.benchmark) == ("4.1", "PingPong")
    big = run.rows[-1]
    assert big.printed["bandwidth_MBps"] == "1347.94"
    assert big.figures["bandwidth_MBps"] == pytest.approx(4194304 / 2967.49e-6 / 1e6,
                                                          rel=1e-5)
    assert "2^20" in run.header["units"] and run.warning is None
    db = tmp_path / "r.db"
    done = commscope("import", path, "--db", db)
    assert done.returncode == 0, done.stderr
    shown = commscope("results", "show", "1", "--db", db, "--wide").stdout
    assert "imb 4.1 PingPong" in shown and "2^20 bytes a second: stored as 10^6" in shown
    case = json.loads(commscope("results", "show", "1", "--json", "--db", db).stdout)["cases"]
    assert case[-1]["bandwidth_MBps"] == pytest.approx(1413.42, abs=0.01)


def test_imb_without_its_banner_is_read_as_today_s_and_says_so(tmp_path):
    path = tmp_path / "imb.txt"
    path.write_text("\n".join(IMB_41.splitlines()[6:]) + "\n")
    (run,) = parse(path)
    assert run.version == "" and run.rows[-1].figures["bandwidth_MBps"] == 1347.94
    assert "version not printed" in run.warning
    done = commscope("import", path, "--db", tmp_path / "r.db")
    assert done.returncode == 0 and "version not printed" in done.stderr
