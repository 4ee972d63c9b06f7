"""Every bench/ script, run as `make bench` runs it but at its --smoke size: the same
functions on tiny counts, so a change to a path a bench walks fails here and not months
later on a quiet machine. The assertions are on the shape of what each prints (its
figures and ratios, as numbers), never on the timings themselves.

Stand-ins, where a bench needs what a test cannot have:
- the fake MPI (tests/fakempi) for calibration.py, fit_coverage.py, guidelines.py and the
  results file cluster_predictions.py --db reads: they only drive `commscope run`,
  `compare`, `check`, `fit` and `predict`, which the fake runs for real (the benches in
  their own processes, so through the fake prefix's mpirun; the results file in this one,
  by the fake launcher);
- programs printing OSU Micro-Benchmarks' layout (OSU_COLUMNS) for agreement*.py, launched
  by the real MPI as OSU would be: what the bench reads from them is that layout.
cluster_predictions.py's measuring half needs root and network namespaces
(tests/test_cluster.py tests the cluster itself); its --db half runs here.
The benches that launch real MPI (marked mpi) run on the embedded Open MPI alone: what
they do with the library's output does not depend on which library it is.
"""

from __future__ import annotations

import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EMBEDDED, commscope

BENCH = Path(__file__).resolve().parent.parent / "bench"
NUMBER = r"-?[\d,]+(?:\.\d+)?"
# Each OSU program's numeric columns after the size, in OMB 7.x's layout (osu_iallreduce
# with -f: overall, compute, init, test, wait, pure, min and max communication us, then
# overlap %; a blocking collective with -f: average, minimum and maximum us, iterations;
# osu_mbw_mr: MB/s, messages/s).
OSU_COLUMNS = {"osu_bw": 1, "osu_bibw": 1, "osu_latency": 1, "osu_bw_persistent": 1,
               "osu_latency_persistent": 1, "osu_mbw_mr": 2, "osu_iallreduce": 9,
               "osu_allreduce": 4, "osu_multi_lat": 1, "osu_put_latency": 1,
               "osu_get_latency": 1}
OSU_STANDIN = '''#!{python}
"""A stand-in for {name} (tests/test_bench.py): OMB's layout, comment lines then one line
per power-of-two size in -m MIN:MAX, printed by rank 0 alone."""
import os
import sys

if os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMI_RANK", "0")) == "0":
    low, high = map(int, sys.argv[sys.argv.index("-m") + 1].split(":"))
    print("# {name}: a stand-in\\n# Size" + " Value" * {columns})
    size = low
    while size <= high:
        print(size, *(f"{{1.5 + column:.2f}}" for column in range({columns})))
        size = 2 * size if size else 1
'''


def bench(script: str, *args, timeout: float = 120) -> str:
    """The script's standard output; it must exit 0."""
    done = subprocess.run([sys.executable, str(BENCH / script), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def lines_like(out: str, pattern: str) -> list[str]:
    return [line for line in out.splitlines() if re.fullmatch(pattern, line)]


def osu_stand_ins(folder: Path) -> Path:
    for name, columns in OSU_COLUMNS.items():
        path = folder / name
        path.write_text(OSU_STANDIN.format(python=sys.executable, name=name, columns=columns))
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return folder


@pytest.fixture
def osu_dir(tmp_path) -> Path:
    return osu_stand_ins(tmp_path)


def test_analysis():
    out = bench("analysis.py", "--smoke")
    assert lines_like(out, rf"{NUMBER} stored samples in 46 cases")  # 2 modes x 23 sizes
    for phase in ("ingest", "statistics", "fit", "report"):
        assert lines_like(out, rf"  {phase} +{NUMBER} s"), out
    assert lines_like(out, rf"total {NUMBER} s  \(target <= 3 s\): (met|MISSED)"), out


def test_scale():
    out = bench("scale.py", "--smoke")
    for ranks in (4, 8):
        assert lines_like(out, rf" +{ranks} ranks: stream +{NUMBER} MB  ingest +{NUMBER} s  "
                               rf"statistics +{NUMBER} s  report +{NUMBER} s  total +{NUMBER} s"
                               rf"  peak +{NUMBER} MB  \(store {NUMBER} MB, page {NUMBER} MB\)"
                          ), out
    assert lines_like(out, rf"from 4 to 8 ranks \(2x\): time x{NUMBER} \(~ ranks\^{NUMBER}\), "
                           rf"peak memory x{NUMBER} \(~ ranks\^{NUMBER}\)"), out


def test_concurrent_create():
    out = bench("concurrent_create.py", "--smoke")
    assert lines_like(out, r"6 concurrent starts on 3 new files: 0 failures"), out
    assert lines_like(out, rf"opening took median {NUMBER} ms, max {NUMBER} ms"), out


def test_coverage():
    out = bench("coverage.py", "--smoke")
    percent = rf" +{NUMBER}%"
    # one line per tau and setting, then one per tau for compare
    assert len(lines_like(out, rf"{percent}  \S.*?(?:{percent}){{6}}")) == 5 * 6, out
    assert len(lines_like(out, rf"(?:{percent}){{5}}")) == 5, out
    # by thirds: per shape, ratio and history, three coverages, the half-width, x oracle;
    # then the same per pilot (3, 5, 8) without and with history
    assert len(lines_like(out, rf".*?(?:{percent}){{4}} +{NUMBER}")) == 3 * 5 * 2 + 3 * 2, out


def test_fit_coverage(fake_mpi):
    out = bench("fit_coverage.py", "--smoke", "--mpi", fake_mpi)
    for level in ("launches and commands ", "within the launches   "):
        assert lines_like(out, rf"{level}: next command's alpha inside [01] of 1, B inside [01] "
                               rf"of 1; median B interval width {NUMBER}%"), out


def test_calibration(fake_mpi):
    out = bench("calibration.py", "--smoke", "--mpi", fake_mpi)
    for kernel, sizes in (("pingpong", "8:64"), ("bw", "4KiB:8KiB")):
        figures = (rf"overlap {NUMBER}%, in a level {NUMBER}% \(goal >= 98%\), coverage "
                   rf"{NUMBER}% \(goal >= 90%\), half-width median \+-{NUMBER}% "
                   rf"widest \+-{NUMBER}%")
        assert lines_like(out, rf"{kernel} {sizes}: {figures}, launches median {NUMBER}; "
                               rf"compare calls no regression in [01]/1 pairs = {NUMBER}% "
                               rf"\(goal >= 95%\)"), out
        # the same invocations through the estimator before issue 37, from git
        assert lines_like(out, rf"  before \(\w+\): {figures}; width now over before: median "
                               rf"{NUMBER} \(goal <= 0.6\); "
                               rf"compare calls no regression in [01]/1 pairs"), out


def test_guidelines(fake_mpi):
    out = bench("guidelines.py", "--smoke", "--mpi", fake_mpi)
    assert lines_like(out, rf"false alarms: [0-2] of 2 commands \({NUMBER}%, goal <= 5%\) with a "
                           rf"violation; \d+ of 4 verdicts \({NUMBER}%\)"), out
    assert lines_like(out, rf"catalogue: allreduce<=reduce\+bcast monotony:bcast --np 2 --sizes "
                           rf"8:16: {NUMBER} s, {NUMBER} of the 180 s goal; 3 verdicts, \d+ "
                           rf"violated"), out


def test_cluster_predictions_from_a_results_file(fake_mpi, fake, db):
    """The results file the bench's measuring half makes, with its flags: run 1 a pingping
    fit, then a kernel's run per host count (here one, by the in-process fake launcher,
    without the cluster)."""
    quick = ("--launches", "1", "--iters", "5", "--mpi", fake_mpi, "--db", db)
    for argv in (("pingping", "--sizes", "16KiB:4MiB"),
                 ("ring", "--param", "pattern=ring", "--param", "post=send-first",
                  "--sizes", "64KiB,1MiB")):
        done = commscope("run", *argv, *quick, launcher=fake)
        assert done.returncode == 0, done.stderr
    out = bench("cluster_predictions.py", "--db", db)
    assert len(lines_like(out, rf"ring send-first P=2 +\d+ B: measured +{NUMBER} us, \S+ +"
                               rf"{NUMBER} us, error [+-]{NUMBER}%")) == 2, out
    assert lines_like(out, r"ring send-first: [012] of 2 within 25%"), out


@pytest.mark.mpi
def test_overhead():
    out = bench("overhead.py", "--smoke", "--mpi", EMBEDDED)
    assert lines_like(out, rf"latency ratio   {NUMBER}  \(target <= 1.02\)"), out
    assert lines_like(out, rf"bandwidth ratio {NUMBER}  \(target >= 0.98\)"), out


@pytest.mark.mpi
@pytest.mark.parametrize("reference", ["fixed-count", "osu"])
def test_time_to_answer(reference, tmp_path):
    osu = ["--osu", osu_stand_ins(tmp_path)] if reference == "osu" else []
    out = bench("time_to_answer.py", "--smoke", "--mpi", EMBEDDED, *osu)
    first = r"osu_latency \+ osu_bw" if osu else "fixed-count"
    assert lines_like(out, rf"{first} .* +{NUMBER} s"), out
    assert lines_like(out, rf"commscope defaults .* +{NUMBER} s"), out
    assert lines_like(out, rf"wall-time ratio {NUMBER}  \(goal <= 1\)"), out
    assert lines_like(out, rf"widest interval \+-{NUMBER}%; most launches of a case: \d+"), out


@pytest.mark.mpi
def test_agreement(osu_dir):
    out = bench("agreement.py", "--smoke", "--osu", osu_dir, "--mpi", EMBEDDED)
    ratio = rf"{NUMBER} \[{NUMBER}-{NUMBER}\]"
    for kernel, reference in (("bw", "osu_bw"), ("bibw", "osu_bibw"),
                              ("pingpong", "osu_latency")):
        assert lines_like(out, rf"{kernel} \S+ \S+ (MB/s|us) +{reference} +{NUMBER}  commscope "
                               rf"+{NUMBER}  commscope/{reference} {ratio}"), out
    assert lines_like(out, rf"bw .* control/osu_bw {ratio}"), out
    goal = r"  goal \+-10%: (met|MISSED)"
    assert lines_like(out, rf"allreduce np2 8 B us +osu-max +{NUMBER}  commscope +{NUMBER}  "
                           rf"commscope/osu-max {ratio}{goal}"), out
    assert lines_like(out, rf"allreduce np2 8 B rank-mean us +osu-avg +{NUMBER}  commscope "
                           rf"+{NUMBER}  commscope/osu-avg {ratio}"), out
    assert lines_like(out, rf"iallreduce np2 8 B pure us +osu-max +{NUMBER}  commscope "
                           rf"+{NUMBER}  commscope/osu-max {ratio}{goal}"), out
    for stem, reference in (("multi_lat np2 8 B us", "osu_multi_lat"),
                            ("multi_lat np4 8 B us", "osu_multi_lat"),
                            ("rma put 8 B us", "osu_put_latency"),
                            ("rma get 8 B us", "osu_get_latency")):
        assert lines_like(out, rf"{stem} +{reference} +{NUMBER}  commscope +{NUMBER}  "
                               rf"commscope/{reference} {ratio}"), out


@pytest.mark.mpi
def test_agreement_osu7(osu_dir):
    out = bench("agreement_osu7.py", "--smoke", "--osu", osu_dir, "--mpi", EMBEDDED)
    ratio = rf"{NUMBER} \[{NUMBER}-{NUMBER}\]"
    both = rf" +{NUMBER}  {{other}} +{NUMBER}  "
    assert len(lines_like(out, rf"mbw_mr np2 8 B .* osu{both.format(other='commscope')}"
                               rf"commscope/osu {ratio}")) == 2, out
    assert len(lines_like(out, rf"iallreduce 64 KiB tests=(0|100) overlap % +osu"
                               rf"{both.format(other='commscope')}commscope - osu [+-]{NUMBER} "
                               rf"points \[[+-]{NUMBER} to [+-]{NUMBER}\]")) == 2, out
    for stem, base, other in (("pingpong 8 B persistent us", "osu", "commscope"),
                              ("bw 1 MiB persistent MB/s", "osu", "commscope"),
                              ("allreduce 8 B us", "blocking", "persistent"),
                              ("p2p 65536 B us", "pingpong", "partitioned")):
        assert lines_like(out, rf"{stem} +{base}{both.format(other=other)}{other}/{base} "
                               rf"{ratio}"), out


@pytest.mark.mpi
def test_signals():
    out = bench("signals.py", "--repeat", "1", "--mpi", EMBEDDED, timeout=300)
    assert re.fullmatch(rf"second Ctrl-C, launcher stopped, {re.escape(str(EMBEDDED))}: 1/1 "
                        rf"ended at once \(exit 130 within 3 s, nothing left\); first Ctrl-C to "
                        rf"end: median {NUMBER} s, max {NUMBER} s\n", out), out


def test_tune(fake_mpi):
    out = bench("tune.py", "local", "--smoke", "--mpi", fake_mpi)
    assert "tune" in out and "verify" in out
    assert "allreduce chosen at" in out and "highest upper bound" in out


def test_screen_sim_and_scale():
    out = bench("screen.py", "sim", "--smoke")
    # one row per ratio: nodes, cap, ratio, screens, named, named within 16 rounds, others,
    # rounds, 90th percentile
    rows = lines_like(out, rf" +8 +10 +{NUMBER} +2 +{NUMBER}% +{NUMBER}% +{NUMBER}% +\d+ +\d+")
    assert len(rows) == 5, out
    assert len(lines_like(out, rf"\d switches of .* +{NUMBER}% +{NUMBER}% +{NUMBER}%")) == 3
    out = bench("screen.py", "scale", "--smoke")
    assert lines_like(out, r"16 nodes, one at 0.8 of the rate: \d+ rounds, a launch each, .*"), out
    assert lines_like(out, rf"analysis {NUMBER} s .* peak memory {NUMBER} MB "
                           rf"\(target 1024 MB\)"), out


def test_launch_effects_and_threshold_rows():
    """screen.py launches: a row per launch effect, four rates; health.py threshold: a row
    per launch effect at 4 nodes, four rates."""
    rate = rf"{NUMBER}%"
    out = bench("screen.py", "launches", "--smoke")
    assert len(lines_like(out, rf" +8 .+ +2 +{rate} +{rate} +{rate} +{rate}")) == 7, out
    out = bench("health.py", "threshold", "--smoke")
    assert len(lines_like(out, rf" +4 +(none|random 5%) +2 +{rate} +{rate} +{rate} +{rate}")) \
        == 2, out


def test_health_scale():
    out = bench("health.py", "scale", "--smoke")
    assert re.search(rf"analysis {NUMBER} s \(.*\), report {NUMBER} s \(.*; target 5 s\); "
                     rf"peak memory {NUMBER} MB \(target 1024 MB\)", out), out
    assert "drained ['n2'] (the slow node: n2)" in out


def test_verdicts():
    """Each verb's rows: rates as numbers between 0 and 1, a gain as a number; health at
    its default launches."""
    from commscope.cli.health import LAUNCHES
    out = bench("verdicts.py", "--smoke")
    rate = r"(?:0|1)\.\d{3}"
    # per command pair and per bundle, at 1.00 and at the threshold; power, coverage
    assert lines_like(out, r"check +2% +3" + rf" +{rate}" * 7), out
    health = rf" +8 +{LAUNCHES} +\d+% +2 +{rate} +{rate} +{rate} +{rate}"
    assert len(lines_like(out, health)) == 3, out
    assert lines_like(out, rf" +2% +3 +{NUMBER} +{rate} +{rate}"), out


def test_history_prints_a_row_per_condition_with_wilson_intervals():
    """Per compare: each recorded condition and lognormal, each rule off in turn, with
    compare's and check's rates and their intervals as percentages; lognormal's three
    powers as rates."""
    out = bench("history.py", "--compares", 5, "--earlier", 4, "--rules", "states apart")
    share = r"\d+\.\d% \[ *\d+\.\d, *\d+\.\d\]"
    conditions = r"(busy|busy_both|cluster|quiet|second_job)"
    rate = r"[01]\.\d{3}"
    for rules in ("all", "without states apart"):
        assert len(lines_like(out, rf"{rules} +{conditions} +4 +{share} +{share} +{share} *"
                              )) == 5, out
        assert lines_like(out, rf"{rules} +lognormal +4 +{share} +{share} +{share} +{rate} "
                               rf"+{rate} +{rate}"), out


def test_edges_prints_a_row_for_each_edge():
    """Rates as numbers between 0 and 1 under each edge of the model: compare's six
    histories, the 4+4 file's two, --runs' three (with how the command term was found),
    two families at 4-40 guidelines, the named intervals and the run interval's four
    noisy sizes."""
    out = bench("edges.py", "--smoke")
    rate = r"(?:0|1)\.\d{3}"
    assert len(lines_like(out, rf" +[12]\.[05] +(own|shared) +{rate}")) == 6, out
    assert len(lines_like(out, rf" +(agree|differ 5%) +{rate}")) == 2, out
    assert len(lines_like(out, rf" +[12]\.[05] +{rate} +(history|assumed)(\+history)?")) == 3, out
    assert len(lines_like(out, rf" +(4|10|20|40) +(command|guideline) +{rate}")) == 8, out
    assert lines_like(out, rf"named, 20 a family: \d+ intervals, missing the truth {rate}"), out
    assert len(lines_like(out, rf" +\d+ +{rate} +{rate} +{NUMBER}")) == 4, out


def test_live_bench_prints_its_rows():
    out = bench("live.py", "--smoke")
    assert len(lines_like(out, r"(lognormal|mixture|stalls) +2% +24( +[0-9.]+){7}")) == 3, out


def test_watch():
    out = bench("watch.py", "--smoke")
    rate = rf" +{NUMBER}%"
    for noise in ("lognormal", "mixture"):  # false, undetermined, powers, said, missed
        assert lines_like(out, rf"{noise} +{NUMBER} +{NUMBER}{rate}{rate} +{NUMBER}{rate}{rate}"
                               r" +\S+"), out
    for series in ("toggled every 2 s", "steady", "slow warm-up 2 s", "one slow burst 2 s"):
        assert lines_like(out, rf"{series} +{NUMBER}% +{NUMBER}% +\S+"), out
    assert lines_like(out, rf"scale: steps\(\) over 1000 probes x 10 cases: {NUMBER} s "
                           r"\(target <= 5 s at 10\^4 x 100: not measured by --smoke\)"), out
