"""`commscope tune`: the library's algorithms as a kernel parameter read from the library,
the choice where one algorithm is faster beyond doubt and nowhere else, the rules in each
library's own format, `--verify`, the report and bad input. On the fake launcher a side's
speed is known exactly; on both real MPIs, a user-defined reduction counts how the
library reduces, which tells its algorithms apart (docs/tune.md)."""

from __future__ import annotations

import dataclasses
import json
import math
import re

import pytest

from conftest import commscope, one_line_error
from fakempi.inprocess import FakeLauncher
from test_check import agreeing, defined
from commscope.judge.rules import mpich, openmpi
from commscope.judge.tune import Range

SIZES = "8,64,4KiB,64KiB"


def ring_halves_large(value, nbytes):
    return 0.5 if value == "ring" and nbytes >= 4096 else 1.0


def tune(fake_mpi, db, tmp_path, *args, launcher=None):
    out = tmp_path / "tuned.rules"
    done = commscope("tune", *args, "--mpi", fake_mpi, "--db", db, "-o", out, "--json",
                     launcher=launcher or FakeLauncher())
    if done.returncode == 0:
        assert algorithms_agree(json.loads(done.stdout)["points"])
    return done, out


def algorithms_agree(found: list[dict]) -> int:
    """Each algorithm's ratio within the interval of its time over the default's
    (test_check.agreeing, for tune's points); the count held to it."""
    return agreeing([{"ratio": a["ratio"], "left_s": a["time_s"], "left_ci": a["time_ci"],
                      "right_s": p["default_s"], "right_ci": p["default_ci"]}
                     for p in found for a in p["algorithms"]])


def test_tune_chooses_an_algorithm_only_where_it_is_faster_and_writes_open_mpis_rules(
        fake_mpi, db, tmp_path):
    done, out = tune(fake_mpi, db, tmp_path, "allreduce", "--np", "4", "--sizes", SIZES,
                     "--launches", "3", launcher=FakeLauncher(factor=ring_halves_large))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert {p["bytes"]: p["choice"] for p in data["points"]} == \
        {8: None, 64: None, 4096: "ring", 65536: "ring"}
    big = next(p for p in data["points"] if p["bytes"] == 65536)
    assert big["gain"] == pytest.approx(0.5, abs=0.05)
    assert big["regret"] == pytest.approx(2.0, rel=0.1)
    ring = next(a for a in big["algorithms"] if a["algorithm"] == "ring")
    assert ring["ci"][1] < 1 and ring["p_value"] < 0.05
    # Each time with its launch-aware interval, as `run` gives it.
    assert big["default_ci"][0] <= big["default_s"] <= big["default_ci"][1]
    assert ring["time_ci"][0] <= ring["time_s"] <= ring["time_ci"][1] < big["default_ci"][0]
    # Every algorithm the library lists was measured, in the same launches as the default.
    names = {a["algorithm"] for a in big["algorithms"]}
    assert {"basic_linear", "recursive_doubling", "ring", "rabenseifner"} <= names
    assert data["written"] == [str(out)]
    assert "coll_tuned_dynamic_rules_filename " + str(out) in data["use"]
    rules = [line.split("#")[0].split() for line in out.read_text().splitlines()[1:]]
    rules = [r for r in rules if r]
    # allreduce (2), two communicator sizes: below the tuned, and 4 ranks with two rules:
    # from 0 the library's own (0), from 4096 B ring (4), fan-out 4, no segments.
    assert rules == [["1"], ["2"], ["2"], ["1", "1"], ["0", "0", "0", "0"], ["4", "2"],
                     ["0", "0", "4", "0"], ["4096", "4", "4", "0"]]
    assert openmpi.read(out.read_text(), "x").collectives == {"allreduce": (4,)}


def test_ties_keep_the_library_s_own_choice_everywhere(fake_mpi, db, tmp_path):
    done, out = tune(fake_mpi, db, tmp_path, "allreduce", "bcast", "--np", "4", "--sizes",
                     SIZES, "--launches", "3")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert len(data["points"]) == 8
    assert all(p["choice"] is None and p["gain"] == 0 for p in data["points"])
    numbers = [line.split("#")[0].split() for line in out.read_text().splitlines()[1:]]
    assert all(r[1] == "0" for r in numbers if len(r) == 4)  # every rule: the library's


class RulesLauncher(FakeLauncher):
    """Launches with a rules file run `rules_scale` times as long as the default's, with
    launch noise of their own (identical launches would be a spread of 0: unknown)."""
    rules_scale: float = 1.0

    def start(self, mpi, ranks, args, placement, records):
        self.scale = self.rules_scale if placement.library else 1.0
        self.seed = 1 if placement.library else 0
        return super().start(mpi, ranks, args, placement, records)


@pytest.mark.parametrize("scale, code", [(1.3, 1), (0.8, 0)])
def test_verify_flags_rules_slower_than_the_default_and_passes_faster(fake_mpi, db, tmp_path,
                                                                      scale, code):
    _, out = tune(fake_mpi, db, tmp_path, "allreduce", "--np", "4", "--sizes", SIZES,
                  "--launches", "3", launcher=FakeLauncher(factor=ring_halves_large))
    launcher = RulesLauncher()
    launcher.rules_scale = scale
    xml = tmp_path / "verify.xml"
    done = commscope("tune", "--verify", out, "--sizes", "64,4KiB", "--launches", "4",
                     "--mpi", fake_mpi, "--db", db, "--json", "--junit", xml,
                     launcher=launcher)
    assert done.returncode == code, done.stderr
    checks = json.loads(done.stdout)["checks"]
    import junitparser
    read = junitparser.JUnitXml.fromfile(str(xml))
    (suite,) = [read] if isinstance(read, junitparser.TestSuite) else list(read)
    assert [(c.name, c.is_passed) for c in suite] == [
        ("allreduce np4 64 B", scale < 1), ("allreduce np4 4 KiB", scale < 1)]
    assert [(c["np"], c["bytes"]) for c in checks] == [(4, 64), (4, 4096)]
    assert agreeing(checks, "rules", "default") == 2
    assert all(c["failing"] == (scale > 1) for c in checks)
    assert all(c["ratio"] == pytest.approx(scale, rel=0.05) for c in checks)
    # The default and the rules alternate, launch by launch, default-rules-rules-default
    # (4 launches a side as 2 pairs of runs of 2); the rules by Open MPI's MCA.
    with_rules = ["coll_tuned_dynamic_rules_filename" in " ".join(a) for a in launcher.launched]
    assert with_rules == [False, True, True, False] * 2
    assert all(c["launches"] == 4 for c in checks)
    assert str(out) in " ".join(launcher.launched[1])


def test_the_tables_define_every_column_and_word_they_print(fake_mpi, db, tmp_path):
    from commscope.views.tune import HEADER, VERIFY
    out = tmp_path / "tuned.rules"
    done = commscope("tune", "allreduce", "--np", "4", "--sizes", SIZES, "--launches", "3",
                     "--mpi", fake_mpi, "--db", db, "-o", out,
                     launcher=FakeLauncher(factor=ring_halves_large))
    assert done.returncode == 0, done.stderr
    defined(done.stdout, HEADER, {"collective", "size", "fastest", "choice"},
            " points choose ")
    launcher = RulesLauncher()
    launcher.rules_scale = 1.3
    done = commscope("tune", "--verify", out, "--sizes", "64,4KiB", "--launches", "4",
                     "--mpi", fake_mpi, "--db", db, launcher=launcher)
    assert done.returncode == 1 and "inferior" in done.stdout, done.stderr
    defined(done.stdout, VERIFY, {"collective", "size", "verdict"})


def test_verify_exits_3_where_every_size_is_undetermined_and_1_with_fail_on(fake_mpi, db,
                                                                           tmp_path):
    # the rules exactly the least gain slower, with noisy launches: the interval spans the
    # threshold, so the gate cannot pass it (docs/usage.md, "Exit status")
    from xml.etree import ElementTree
    _, out = tune(fake_mpi, db, tmp_path, "allreduce", "--np", "4", "--sizes", SIZES,
                  "--launches", "3", launcher=FakeLauncher(factor=ring_halves_large))
    xml = tmp_path / "verify.xml"
    for extra, code, failures, skipped in (((), 3, "0", "1"),
                                           (("--fail-on", "undetermined"), 1, "1", "0")):
        launcher = RulesLauncher(spread=0.5)
        launcher.rules_scale = 1 / 0.95
        done = commscope("tune", "--verify", out, "--sizes", "64", "--launches", "4",
                         "--mpi", fake_mpi, "--db", db, "--json", "--junit", xml, *extra,
                         launcher=launcher)
        checks = json.loads(done.stdout)["checks"]
        assert [c["verdict"] for c in checks] == ["undetermined"]
        # the second verify's history holds the first's noisy commands beside tune's quiet
        # ones: the states between them may leave its default without an interval
        assert agreeing(checks, "rules", "default") == 1 or extra
        assert done.returncode == code, done.stderr
        root = ElementTree.parse(xml).getroot()
        assert (root.get("failures"), root.get("skipped")) == (failures, skipped)


def test_an_algorithm_by_its_number_is_the_same_case_as_by_its_name(fake_mpi, db):
    done = commscope("run", "allreduce", "--np", "4", "--sizes", "64", "--algorithm", "4",
                     "--launches", "1", "--mpi", fake_mpi, "--db", db, "--json",
                     launcher=FakeLauncher())
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["cases"][0]["params"]["algorithm"] == "ring"


def test_the_report_shows_each_algorithm_the_choice_and_the_regret(fake_mpi, db, tmp_path):
    tune(fake_mpi, db, tmp_path, "allreduce", "--np", "4", "--sizes", SIZES, "--launches",
         "3", launcher=FakeLauncher(factor=ring_halves_large))
    page = tmp_path / "r.html"
    done = commscope("report", "--db", db, "-o", page)
    assert done.returncode == 0, done.stderr
    html = page.read_text()
    assert "Algorithms (commscope tune)" in html
    assert "allreduce at 4 ranks: an algorithm chosen at 2 of 4 sizes" in html
    # At 64 KiB ring takes half the default's time: regret 2 (each time results show's,
    # with the fake's launch noise: 2.00-2.02 here), chosen, half the time gained.
    assert '<td>ring</td><td class="num">17.0' in html
    assert re.search(r'<td class="num">2\.0[0-3]</td><td>ring</td><td class="num">50\.', html)


@pytest.mark.parametrize("args, words", [
    (("run", "allreduce", "--algorithm", "nope"), "has no such algorithm"),
    (("run", "allreduce", "--algorithm", "99"), "ring (4)"),
    (("run", "gatherv", "--algorithm", "linear"), "has no coll_tuned_gatherv_algorithm"),
    (("run", "allgatherv", "--algorithm", "ring"), "keeps coll_tuned_allgatherv_algorithm fixed"),
    (("run", "allreduce", "--algorithm", "ring", "--as", "reduce+bcast"), "drop one"),
    (("run", "allreduce", "--algorithm", "ring", "--persistent"), "drop one"),
    (("tune", "pingpong"), "tune takes"),
    (("tune",), "name the collectives"),
    (("tune", "allreduce", "-o", "/no/such/dir/x.rules"), "no such directory"),
    (("tune", "--verify", "/no/such/file"), "no such file"),
    (("tune", "allreduce", "--junit", "x.xml"), "--junit is for --verify"),
    (("tune", "allreduce", "--fail-on", "undetermined"), "--fail-on is for --verify"),
    (("tune", "allreduce", "--fail-on", "violated"), "--fail-on: invalid choice"),
    (("tune", "allreduce", "--min-gain", "0"), "--min-gain 0"),
    (("tune", "allreduce", "--min-gain", "1.5"), "--min-gain 1.5"),
])
def test_bad_input_is_one_line(fake_mpi, db, args, words):
    line = one_line_error(commscope(*args, "--mpi", fake_mpi, "--db", db,
                                    launcher=FakeLauncher()))
    assert words in line
    assert not db.exists()  # refused before anything was measured


@pytest.mark.parametrize("text, words", [
    ("hello\n", "line 1: 'hello' is not a number"),
    ("1\n2\n1\n", "ends before"),
    ("1\n2\n1\n4 1\n8 3 4 0\n", "must be for message size 0"),
    ("1\n2\n1\n4 1\n0 -3 4 0\n", "must not be negative"),
    ("1\n2\n1\n4 1\n0 3 4 0\n7\n", "numbers after the last collective"),
    ("1\n99\n", "collective id 99"),
])
def test_a_rules_file_open_mpi_would_reject_is_one_line(fake_mpi, db, tmp_path, text, words):
    bad = tmp_path / "bad.rules"
    bad.write_text(text)
    line = one_line_error(commscope("tune", "--verify", bad, "--mpi", fake_mpi, "--db", db,
                                    launcher=FakeLauncher()))
    assert words in line and "bad.rules" in line


def test_open_mpi_rules_read_back_what_was_written():
    from commscope.system.kernels import catalog
    from conftest import EMBEDDED
    from commscope.system.mpi import find_mpi
    kernels = catalog(find_mpi(str(EMBEDDED))).kernels
    ranges = [Range("alltoall", 4, 8, 64, None), Range("alltoall", 4, 4096, 65536, "pairwise"),
              Range("alltoall", 8, 8, 65536, "linear"), Range("bcast", 8, 8, 8, "binomial")]
    text = openmpi.write(ranges, kernels)
    assert openmpi.read(text, "x").collectives == {"alltoall": (4, 8), "bcast": (8,)}
    alltoall = text.split("# alltoall")[1].split("# bcast")[0]
    # The message size is the whole send buffer (a block times the ranks), and alltoall's
    # rules carry max_requests.
    assert "16384 2 4 0 0" in alltoall and "\n0 1 4 0 0" in alltoall


def test_mpich_selection_keeps_the_library_s_tree_where_nothing_was_chosen(monkeypatch):
    # The library's own leaves say which algorithms a file can name, and with what
    # parameters (here ring's made-up k=3).
    own = {"avg_msg_size<=8": {"algorithm=MPIR_Allreduce_intra_recursive_doubling": {}},
           "avg_msg_size<=64": {"algorithm=MPIR_Allreduce_intra_ring": {"k=3": {}}},
           "avg_msg_size=any": {"algorithm=MPIR_Allreduce_intra_reduce_scatter_allgather": {}}}
    gather = {"total_msg_size<=64": {"algorithm=MPIR_Allgather_intra_ring": {}},
              "total_msg_size=any": {"algorithm=MPIR_Allgather_intra_brucks": {}}}
    tree = {"collective=allreduce": {"comm_type=intra": own, "comm_type=inter": {}},
            "collective=allgather": {"comm_type=intra": gather},
            "collective=barrier": {"comm_type=intra": {"algorithm=MPIR_Barrier_intra_k": {}}}}
    shm = {"collective=allreduce": {"comm_type=intra": {"is_multi_threaded=no": {
        "algorithm=MPIDI_POSIX_mpi_allreduce_release_gather": {}}}}}
    monkeypatch.setattr(mpich, "selection", lambda binary: (json.loads(json.dumps(tree)),
                                                            json.loads(json.dumps(shm)), b""))
    assert mpich.writable(None) == {"allreduce": {"recursive_doubling", "ring",
                                                  "reduce_scatter_allgather"},
                                    "allgather": {"ring", "brucks"}, "barrier": {"k"}}
    kernels = {"allreduce": dataclasses.make_dataclass("K", ["params"])({"op": None}),
               "allgather": dataclasses.make_dataclass("K", ["params"])({})}
    ranges = [Range("allreduce", 4, 8, 64, None), Range("allreduce", 4, 4096, 65536, "ring"),
              Range("allgather", 4, 8, 8, "ring"), Range("allgather", 4, 64, 64, None)]
    text, posix = mpich.write(ranges, kernels, None)
    written = json.loads(text)
    intra = written["collective=allreduce"]["comm_type=intra"]
    assert list(intra) == ["comm_size<4", "comm_size<=4", "comm_size=any"]
    assert intra["comm_size<4"] == own and intra["comm_size=any"] == own
    sized = intra["comm_size<=4"]["is_commutative=yes"]
    assert sized == {"avg_msg_size<4096": own,
                     "avg_msg_size=any": {"algorithm=MPIR_Allreduce_intra_ring": {"k=3": {}}}}
    assert intra["comm_size<=4"]["is_commutative=no"] == own
    # allgather is keyed by its whole result: 64 B a rank at 4 ranks is 256 B.
    assert written["collective=allgather"]["comm_type=intra"]["comm_size<=4"] == {
        "total_msg_size<256": {"algorithm=MPIR_Allgather_intra_ring": {}},
        "total_msg_size=any": gather}
    assert written["collective=barrier"] == tree["collective=barrier"]
    assert mpich.read(text, "x").collectives == {"allreduce": (4,), "allgather": (4,)}
    # On one node, the shared-memory level hands the sizes with a choice on, and only them.
    shm_sized = json.loads(posix)["collective=allreduce"]["comm_type=intra"]["comm_size<=4"]
    own_shm = shm["collective=allreduce"]["comm_type=intra"]
    assert shm_sized["is_commutative=yes"] == {
        "avg_msg_size<4096": own_shm,
        "avg_msg_size=any": {"is_multi_threaded=yes": {"is_multi_threaded=no": own_shm}}}


# --- on the real libraries ---

def user_op(mpi_prefix, db, *args, env=None) -> dict:
    """allreduce of 16384 ints (64 KiB) with a user-defined sum at 4 ranks: how often
    rank 0's library called the op per iteration, and on how many elements."""
    done = commscope("run", "allreduce", "--np", "4", "--sizes", "64KiB", "--op", "user",
                     "--iters", "20", "--launches", "1", *args, "--mpi", mpi_prefix,
                     "--db", db, env=env)
    assert done.returncode == 0, done.stderr
    from commscope.store.store import Store
    (case,) = Store(str(db)).cases(Store(str(db)).runs()[-1].id)
    return case.extra["user_op"]


def chunked(user_op: dict) -> bool:
    """MPICH's own allreduce of 64 KiB on one node (release_gather) reduces in chunks,
    how many a call varying with the iterations run (the first few go elsewhere)."""
    return user_op["calls_per_iteration"] > 8 and user_op["elements_per_call"] < 4096


RING = {"calls_per_iteration": 3, "elements_per_call": 4096}  # 16384 ints, 4 ranks
DOUBLING = {"calls_per_iteration": 2, "elements_per_call": 16384}


@pytest.mark.mpi
def test_a_forced_algorithm_is_the_one_the_library_runs(mpi_prefix, db):
    """Ring reduces P-1 times a P-th of the vector, recursive doubling log2 P times the
    whole: both libraries, forced through MPI_T within one launch's communicators."""
    assert user_op(mpi_prefix, db, "--algorithm", "ring") == RING
    assert user_op(mpi_prefix, db, "--algorithm", "recursive_doubling") == DOUBLING


@pytest.mark.mpi
def test_the_written_rules_run_the_chosen_algorithm_at_each_size(mpi_prefix, tmp_path):
    """A rules file in the library's own format: Open MPI, recursive doubling at 4 KiB
    and ring at 64 KiB; MPICH, whose file names only the algorithms its own selection
    does, its own choice at 4 KiB and recursive doubling at 64 KiB. A launch that uses
    the file reduces as each algorithm does, there, and as the library does elsewhere."""
    from commscope.system.build import native_binary
    from commscope.system.kernels import catalog
    from commscope.measure.launches import measure_runs
    from commscope.system.mpi import find_mpi
    from commscope.measure.plan import plans, sampling
    from commscope.store.store import Store

    mpi = find_mpi(str(mpi_prefix))
    known = catalog(mpi)
    ompi = mpi.family == "openmpi"
    ranges = [Range("allreduce", 4, 4096, 4096, "recursive_doubling" if ompi else None),
              Range("allreduce", 4, 65536, 65536, "ring" if ompi else "recursive_doubling")]
    rules = openmpi if ompi else mpich
    path = tmp_path / f"t{rules.SUFFIX}"
    for where, text in rules.files(path, ranges, known.kernels, native_binary(mpi)).items():
        if text is not None:
            where.write_text(text)
    (plan,) = plans(known, mpi, kernel="allreduce", np="4", sizes="4KiB,64KiB",
                    params={"op": "user"}, sampling=sampling(iters=20, launches=1))
    with_rules = dataclasses.replace(plan, placement=dataclasses.replace(
        plan.placement, library=tuple(rules.settings(path))))
    store = Store(str(tmp_path / "r.db"), append=True)
    own, ruled = measure_runs(store, mpi, [plan, with_rules], ["test"])
    assert ruled.status == "complete", ruled.outcomes[-1].message
    by_size = {c.bytes: c.extra["user_op"] for c in store.cases(ruled.run_id)}
    library = {c.bytes: c.extra["user_op"] for c in store.cases(own.run_id)}
    if ompi:
        assert by_size == {4096: {"calls_per_iteration": 2, "elements_per_call": 1024},
                           65536: RING}
    else:
        assert by_size[4096] == library[4096]
        assert by_size[65536] == DOUBLING and chunked(library[65536])


@pytest.mark.mpi
def test_an_algorithm_the_library_refuses_here_is_a_skipped_case(db):
    """Open MPI's two_proc allgather on 4 ranks: the library's own refusal, one case."""
    from conftest import EMBEDDED
    done = commscope("run", "allgather", "--np", "4", "--sizes", "64,1KiB", "--algorithm",
                     "two_proc", "--launches", "1", "--mpi", EMBEDDED, "--db", db)
    assert "the MPI library refused it: MPI_ERR_UNSUPPORTED_OPERATION" in done.stderr
    assert done.stderr.count("skipped allgather") == 2


@pytest.mark.mpi
def test_tune_and_verify_run_on_the_real_library(mpi_prefix, db, tmp_path):
    out = tmp_path / "tuned"
    done = commscope("tune", "allreduce", "--np", "4", "--sizes", "8,64KiB", "--launches",
                     "3", "-o", out, "--mpi", mpi_prefix, "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [p["bytes"] for p in data["points"]] == [8, 65536]
    assert all(len(p["algorithms"]) >= 5 for p in data["points"])
    # 4 ranks on this host's 2 cores: a case's launches can lie beyond any interval
    assert algorithms_agree(data["points"]) > 0
    assert out.is_file()
    done = commscope("tune", "--verify", out, "--sizes", "8,64KiB", "--launches", "3",
                     "--mpi", mpi_prefix, "--db", db, "--json")
    assert done.returncode in (0, 1, 3), done.stderr
    checks = json.loads(done.stdout)["checks"]
    assert [(c["np"], c["bytes"]) for c in checks] == [(4, 8), (4, 65536)]
    agreeing(checks, "rules", "default")


@pytest.mark.mpi
def test_a_default_case_after_a_forced_one_is_the_library_s_own(mpi_prefix, tmp_path):
    """Within one launch, each case forces its algorithm or gives the choice back: the
    default, measured before ring in one launch and after it in the next (the order
    turns from launch to launch), reduces as a launch that forces nothing does."""
    from commscope.system.kernels import catalog
    from commscope.measure.launches import measure_runs
    from commscope.system.mpi import find_mpi
    from commscope.measure.plan import plans, sampling
    from commscope.store.store import Store

    mpi = find_mpi(str(mpi_prefix))
    (plan,) = plans(catalog(mpi), mpi, kernel="allreduce", np="4", sizes="64KiB",
                    params={"op": "user"}, sampling=sampling(iters=20, launches=2))
    store = Store(str(tmp_path / "r.db"), append=True)
    alone, both = measure_runs(store, mpi, [plan, dataclasses.replace(
        plan, each=("algorithm", (None, "ring")))], ["test"])
    own = [c.extra["user_op"] for c in store.cases(alone.run_id)]
    ompi = mpi.family == "openmpi"
    assert all(o == own[0] if ompi else chunked(o) for o in own) and own[0] != RING
    for c in store.cases(both.run_id):
        got = c.extra["user_op"]
        if c.params.get("algorithm") == "ring":
            assert got == RING, c.launch
        else:
            assert got == own[0] if ompi else chunked(got), (c.launch, got, own)


def test_an_algorithm_the_rules_format_cannot_name_is_reported_not_chosen():
    from commscope.judge.tune import Option, Point, choose
    from commscope.stats.verdict import Estimate

    def faster(by):  # the default's time over the algorithm's, 5 launches at 1% noise
        return Estimate(math.log(by), 0.01 ** 2, 4, 1 / 5, 5, True)
    tree = Option("tree", 1.0, None, faster(2.0))
    binomial = Option("binomial", 1.5, None, faster(4 / 3))
    (p,) = choose([Point("bcast", 8, 1024, 2.0, None, (tree, binomial), 5)],
                  lambda kernel, algorithm: algorithm != "tree")
    assert (p.choice, p.unwritable) == ("binomial", "tree")
    assert p.gain == pytest.approx(0.25, abs=0.01)


def test_each_algorithm_s_verdict_is_the_core_s_claim_shown_the_other_way_round():
    """The claim's ratio is the default's time over the algorithm's, the side the core
    tests above the least gain; the table and --json show the algorithm's over the
    default's, its interval inverted and the claim's p."""
    from commscope.judge.tune import Option, Point, choose
    from commscope.stats.verdict import Estimate

    def by(ratio):  # the default's time over the algorithm's, 5 launches at 1% noise
        return Estimate(math.log(ratio), 0.01 ** 2, 4, 1 / 5, 5, True)
    (p,) = choose([Point("bcast", 8, 1024, 2.0, None, (
        Option("tree", 1.0, None, by(2.0)), Option("near", 1.96, None, by(1.02)),
        Option("same", 2.0, None, by(1.0)), Option("slow", 3.0, None, by(2 / 3))), 5)])
    assert [o.claim.word for o in p.options] == ["faster", "faster within the gain",
                                                 "no gain", "slower"]
    tree = p.options[0]
    low, high = tree.claim.interval
    assert tree.claim.ratio == pytest.approx(2.0) and low < 2.0 < high
    shown = tree.as_dict()
    assert shown["ratio"] == pytest.approx(0.5)
    assert shown["ci"] == [1 / high, 1 / low] and shown["p_value"] == tree.claim.p < 0.05
    assert p.choice == "tree" and p.gain == pytest.approx(0.5, abs=0.01)
    assert [o.gain for o in p.options[1:]] == [0.0, 0.0, 0.0]


def test_verify_measures_both_sides_of_each_boundary_the_file_names(fake_mpi, db, tmp_path):
    """The file says ring from 4 KiB at 4 ranks: --verify without --sizes measures 4 KiB,
    the first size of ring's range, and 2 KiB, the last of the library's own."""
    _, out = tune(fake_mpi, db, tmp_path, "allreduce", "--np", "4", "--sizes", SIZES,
                  "--launches", "3", launcher=FakeLauncher(factor=ring_halves_large))
    read = openmpi.read(out.read_text(), "x")
    assert read.boundaries == {("allreduce", 4): (4096,)}
    done = commscope("tune", "--verify", out, "--launches", "4", "--mpi", fake_mpi, "--db", db,
                     "--json", launcher=RulesLauncher())
    assert done.returncode == 0, done.stdout
    assert [c["bytes"] for c in json.loads(done.stdout)["checks"]] == [2048, 4096]


def test_the_sizes_of_a_boundary_are_the_range_s_first_and_the_one_before():
    from commscope.judge.rules import Rules
    rules = Rules({"bcast": (8,)}, {("bcast", 8): (1, 1000, 65536)})
    assert rules.sizes("bcast", 8) == [1, 512, 1000, 32768, 65536]
    assert rules.sizes("bcast", 4) == []
