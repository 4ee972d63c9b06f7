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

from conftest import commscope, one_line_error

DATA = Path(__file__).parent / "data" / "imports"
VARIANTS = DATA / "variants"  # written from the tools' printf formats (README.md there)
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
    """Older nccl-tests start at '# nThread'; the test is named by the file's name then,
    or by the mpirun line before it."""
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
    # a file whose name does not say: the test named by the mpirun line before the output
    unnamed = tmp_path / "job-4411.out"
    unnamed.write_text("$ mpirun -np 2 /opt/nccl-tests/build/all_reduce_perf -b 8 -e 128M\n"
                       + older)
    (run,) = parse(unnamed)
    assert (run.benchmark, run.kernel) == ("all_reduce_perf", "allreduce")
    assert _figures([run])[0][4] == _figures([whole])[0][4]
    unnamed.write_text(older)
    assert "put the test's name" in one_line_error(
        commscope("import", unnamed, "--db", tmp_path / "r.db"))


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


def test_text_among_imb_rows_is_skipped_and_an_excerpt_is_refused_as_cut(tmp_path):
    """A library's warning between two rows is not IMB's; an excerpt in a markdown fence,
    without IMB's last line, is refused as truncated, not as a row cut short."""
    warned = tmp_path / "imb.txt"
    warned.write_text(IMB_41.replace("      4194304", "[node1] warning: rcache full\n"
                                                   "      4194304"))
    (run,) = parse(warned)
    assert [r.bytes for r in run.rows] == [0, 4194304]
    excerpt = tmp_path / "imb.md"
    excerpt.write_text("```\n" + IMB_41.split("# All processes")[0] + "```\n")
    assert "without its last line" in one_line_error(
        commscope("import", excerpt, "--db", tmp_path / "r.db"))


def test_imb_without_its_banner_is_read_as_today_s_and_says_so(tmp_path):
    path = tmp_path / "imb.txt"
    path.write_text("\n".join(IMB_41.splitlines()[6:]) + "\n")
    (run,) = parse(path)
    assert run.version == "" and run.rows[-1].figures["bandwidth_MBps"] == 1347.94
    assert "version not printed" in run.warning
    done = commscope("import", path, "--db", tmp_path / "r.db")
    assert done.returncode == 0 and "version not printed" in done.stderr


NCCL = ("count", "root", "time_us", "algbw_GBps", "busbw_GBps", "wrong", "inplace_time_us",
        "inplace_algbw_GBps", "inplace_busbw_GBps", "inplace_wrong")
SIDE = ("time_us", "algbw_GBps", "busbw_GBps", "wrong", "iter_min_us", "iter_max_us",
        "iter_p99_us", "iter_cv_percent")
ITER = ("count", "root", *SIDE, *(f"inplace_{n}" for n in SIDE))
TAILS = ("latency_us", "p50_latency_us", "p90_latency_us", "p99_latency_us")
IMB = ("repetitions", "t_us", "bandwidth_MBps")


def _rows(names, *rows):
    """(bytes, {name: figure}) for each row; None: a column printed N/A, so no figure."""
    return [(r[0], {n: v for n, v in zip(names, r[1:]) if v is not None}) for r in rows]


# fixture -> [(benchmark, kernel, ranks, version, header entries, rows) for each run]
READ = {
    "osu-7.4_latency_z.txt": [("osu_latency", "pingpong", 2, "7.4", {}, _rows(
        TAILS, (1, 1.52, 1.49, 1.61, 2.87), (2, 1.53, 1.50, 1.63, 3.02),
        (4, 1.55, 1.51, 1.66, 2.95)))],
    "osu-7.2_latency_cuda_D_D.txt": [("osu_latency", "pingpong", 2, "7.2", {
        "Accelerator": "CUDA", "Send Buffer": "DEVICE (D)", "Receive Buffer": "DEVICE (D)"},
        _rows(["latency_us"], (1, 18.41), (2, 18.37), (4, 18.52)))],
    "osu-7.2_latency_cuda_H_H.txt": [("osu_latency", "pingpong", 2, "7.2", {
        "Accelerator": "CUDA", "Send Buffer": "HOST (H)", "Receive Buffer": "HOST (H)"},
        _rows(["latency_us"], (1, 18.41), (2, 18.37), (4, 18.52)))],
    "osu-7.2_bw_m4096-16384.txt": [("osu_bw", "bw", 2, "7.2", {}, _rows(
        ["bandwidth_MBps"], (4096, 2875.31), (8192, 4102.66), (16384, 5230.08)))],
    "imb-2021.11_multi1_pingpong.txt": [
        ("Multi-PingPong", "pingpong", 2, "2021.11", {"groups": "2", "group": "0"}, _rows(
            IMB, (0, 1000, 0.41, 0.00), (4, 1000, 0.43, 9.30), (8, 1000, 0.45, 17.78))),
        ("Multi-PingPong", "pingpong", 2, "2021.11", {"groups": "2", "group": "1"}, _rows(
            IMB, (0, 1000, 0.44, 0.00), (4, 1000, 0.47, 8.51), (8, 1000, 0.46, 17.39)))],
    "imb-2021.11_multi0_pingpong.txt": [  # -multi 0: t_min, t_max, t_avg over the groups
        ("Multi-PingPong", "pingpong", 2, "2021.11", {"groups": "2"}, _rows(
            ("repetitions", "t_min_us", "t_max_us", "t_avg_us", "bandwidth_MBps"),
            (0, 1000, 0.41, 0.44, 0.42, 0.00), (4, 1000, 0.43, 0.47, 0.45, 8.51),
            (8, 1000, 0.45, 0.46, 0.46, 17.39)))],
    "nccl-tests-2.19.6_all_reduce_perf_c0.txt": [
        ("all_reduce_perf", "allreduce", 2, "2.19.6", {"avg_busbw_GBps": "0.00201"}, _rows(
            NCCL, (8, 2, -1, 10.21, 0, 0, None, 10.05, 0, 0, None),
            (16, 4, -1, 10.33, 0, 0, None, 10.12, 0, 0, None),
            (32, 8, -1, 10.40, 0, 0, None, 10.29, 0, 0, None)))],
    "nccl-tests-2.19.6_alltoall_perf.txt": [
        ("alltoall_perf", "alltoall", 2, "2.19.6", {"avg_busbw_GBps": "0.000987"}, _rows(
            NCCL, (8, 1, -1, 12.50, 0, 0, 0, 12.31, 0, 0, None),
            (16, 2, -1, 12.62, 0, 0, 0, 12.48, 0, 0, None),
            (32, 4, -1, 12.71, 0, 0, 0, 12.66, 0, 0, None)))],
    "nccl-tests-2.19.6_all_reduce_perf_min_bw.txt": [
        ("all_reduce_perf", "allreduce", 2, "2.19.6",
         {"avg_busbw_GBps": "0.00333", "avg_busbw_check": "OK"}, _rows(
             NCCL, (8, 2, -1, 10.21, 0, 0, 0, 10.05, 0, 0, 0),
             (16, 4, -1, 10.33, 0, 0, 0, 10.12, 0, 0, 0),
             (32, 8, -1, 10.40, 0, 0.01, 0, 10.29, 0, 0.01, 0)))],
    "nccl-tests-2.19.6_all_reduce_perf_S1.txt": [  # -S 1: a timestamp ends each row
        ("all_reduce_perf", "allreduce", 2, "2.19.6", {"avg_busbw_GBps": "1.23"}, _rows(
            NCCL, (1024, 256, -1, 12.50, 0.08, 0.08, 0, 12.25, 0.08, 0.08, 0),
            (4096, 1024, -1, 14.75, 0.28, 0.28, 0, 14.50, 0.28, 0.28, 0)))],
    "nccl-tests-2.19.6_all_reduce_perf_I1.txt": [  # -I 1: per-iteration columns each side
        ("all_reduce_perf", "allreduce", 2, "2.19.6", {"avg_busbw_GBps": "1.23"}, _rows(
            ITER, (1024, 256, -1, 12.50, 0.08, 0.08, 0, 12.10, 13.90, 13.50, 3.25,
                   12.25, 0.08, 0.08, 0, 11.90, 13.40, 13.20, 2.75),
            (4096, 1024, -1, 14.75, 0.28, 0.28, 0, 14.20, 16.50, 16.10, 4.50,
             14.50, 0.28, 0.28, 0, 14.00, 15.90, 15.70, 3.50)))],
}
# fixture -> what its one-line refusal names
REFUSED = {"imb-ext-2021.11_unidir_put.txt": ("Unidir_Put", "MPI-2 part", ":7:", "IMB-MPI1"),
           "imb-rma-2021.11_unidir_put.txt": ("Unidir_put", "MPI-RMA part", ":7:", "IMB-MPI1"),
           "nccl-tests-2.19.6_all_reduce_perf_C1.txt": ("-C 1", "'cputime'", ":10:",
                                                        "a run without -C")}


def test_every_variant_fixture_is_held():
    assert sorted(p.name for p in VARIANTS.glob("*.txt")) == sorted([*READ, *REFUSED])


@pytest.mark.parametrize("name", READ)
def test_a_variant_is_read_figure_by_figure(name):
    runs = parse(VARIANTS / name)
    assert len(runs) == len(READ[name])
    for run, (benchmark, kernel, ranks, version, header, rows) in zip(runs, READ[name]):
        assert (run.benchmark, run.kernel, run.ranks, run.version) == (benchmark, kernel,
                                                                       ranks, version)
        assert {k: run.header.get(k) for k in header} == header
        assert [(r.bytes, r.figures) for r in run.rows] == rows
        assert all(r.printed.keys() == r.figures.keys() for r in run.rows)


def test_a_variant_imports_through_the_cli(tmp_path):
    db = tmp_path / "r.db"
    done = commscope("import", *(VARIANTS / n for n in READ), "--db", db)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("run ") == sum(len(runs) for runs in READ.values())


def test_osu_tail_bandwidth_columns_are_read(tmp_path):
    """osu_bw -z prints 'P50 Tail BW(MB/s)' (osu_util.c print_header)."""
    text = (VARIANTS / "osu-7.2_bw_m4096-16384.txt").read_text().replace(
        "Bandwidth (MB/s)", "Bandwidth (MB/s)    P50 Tail BW(MB/s)").replace(
        "2875.31", "2875.31             2901.12")
    path = tmp_path / "osu_bw_z.txt"
    path.write_text(text.replace("4102.66\n", "4102.66             4110.50\n").replace(
        "5230.08\n", "5230.08             5241.90\n"))
    (run,) = parse(path)
    assert [r.figures.get("p50_bandwidth_MBps") for r in run.rows] == [2901.12, 4110.5,
                                                                        5241.9]


def test_osu_mbw_mr_ranks_are_twice_its_pairs_and_a_collective_s_are_asked_for(tmp_path):
    """osu_mbw_mr prints '# [ pairs: %d ] [ window size: %d ]' (osu_mbw_mr.c): 8 pairs are
    16 ranks. A collective's file prints no count: stored without one, it says so."""
    path = tmp_path / "osu_mbw_mr.txt"
    path.write_text("# OSU MPI Multiple Bandwidth / Message Rate Test v5.6.3\n"
                    "# [ pairs: 8 ] [ window size: 64 ]\n"
                    f"{'# Size':<10}{'MB/s':>20}{'Messages/s':>20}\n"
                    f"{1:<10}{12.34:>20.2f}{12340000.00:>20.2f}\n"
                    f"{2:<10}{24.51:>20.2f}{12255000.00:>20.2f}\n")
    (run,) = parse(path)
    assert (run.kernel, run.ranks, run.header["pairs"]) == ("mbw_mr", 16, "8")
    assert [r.figures for r in run.rows] == [
        {"bandwidth_MBps": 12.34, "messages_per_s": 12340000.0},
        {"bandwidth_MBps": 24.51, "messages_per_s": 12255000.0}]
    done = commscope("import", DATA / "osu-7.2_allreduce.txt", "--db", tmp_path / "r.db")
    assert done.returncode == 0 and "? ranks" in done.stdout
    assert "prints no process count for osu_allreduce: its ranks are unknown (import the " \
           "file again with --np P)" in done.stderr
    again = commscope("import", DATA / "osu-7.2_allreduce.txt", "--np", 4, "--db",
                      tmp_path / "r.db")
    assert "4 ranks" in again.stdout and "warning" not in again.stderr


def test_osu_validation_is_checked_not_stored(tmp_path):
    """osu_bw -c prints a Validation column of Pass or Fail (osu_util.h,
    VALIDATION_STATUS), and after a Fail 'DATA VALIDATION ERROR: ...': Pass rows import
    with their figures; a Fail is refused in one line naming its size."""
    text = (VARIANTS / "osu-7.2_bw_m4096-16384.txt").read_text().replace(
        "Bandwidth (MB/s)", "Bandwidth (MB/s)          Validation")
    rows = [line for line in text.splitlines() if line[:1].isdigit()]
    passed = tmp_path / "osu_bw_c.txt"
    passed.write_text(text.replace("\n".join(rows), "\n".join(
        f"{line}                Pass" for line in rows)))
    (run,) = parse(passed)
    assert [r.figures for r in run.rows] == [{"bandwidth_MBps": b} for b in
                                             (2875.31, 4102.66, 5230.08)]
    assert run.header["Validation"] == "Pass"
    failed = tmp_path / "osu_bw_fail.txt"
    failed.write_text(passed.read_text().replace("5230.08                Pass",
                                                 "5230.08                Fail") +
                      "DATA VALIDATION ERROR: osu_bw exited with status 1 on message size "
                      "16384.\n")
    error = one_line_error(commscope("import", failed, "--db", tmp_path / "r.db"))
    assert "validation of 16384 B reads 'Fail'" in error and ":6:" in error


@pytest.mark.parametrize("name", REFUSED)
def test_what_commscope_cannot_read_as_its_kernels_is_refused_in_one_line(tmp_path, name):
    """IMB-EXT and IMB-RMA blocks; nccl-tests' CPU times (-C 1)."""
    error = one_line_error(commscope("import", VARIANTS / name, "--db", tmp_path / "r.db"))
    assert all(part in error for part in REFUSED[name]), error
