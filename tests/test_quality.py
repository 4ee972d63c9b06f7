"""The quality block: warnings folded to one line per kind, once per command, with the
worst cases first and a remedy that fits the options the run used (advice.py)."""

import csv
import io
import json
import os
import re

from commscope.stats.advice import KINDS, block, options, remedy
from commscope.store.rows import WarningRow
from conftest import commscope
from fakempi.inprocess import FakeLauncher


def test_remedies_fit_the_options_used():
    assert "--bind-to core" in remedy("wide", {"launches": "auto"})
    assert "--bind-to" not in remedy("wide", {"launches": "auto", "bind_to": "core"})
    assert "--launches 3" in remedy("wide", {"launches": 3, "bind_to": "core"})
    assert "raise --iters" in remedy("few_samples", {"iters": 5})
    assert "--iters" not in remedy("few_samples", {"iters": None})
    assert "(it was 2.0 s)" in remedy("capped", {"max_time": 2.0})
    assert "--sync barrier" in remedy("short_samples", {"sync": "window"})
    assert "--sync" not in remedy("short_samples", {"sync": "barrier"})
    assert "2 cores" in remedy("oversubscribed", {}, cores=2)


def test_no_remedy_is_one_the_tool_would_refuse(fake_mpi, db):
    """With more ranks than cores `run --bind-to core` is refused, so no kind's remedy for
    an oversubscribed run advises it."""
    cores = len(os.sched_getaffinity(0))
    refused = commscope("run", "pingpong", "--np", str(cores + 2), "--bind-to", "core",
                        "--mpi", fake_mpi, "--db", db, launcher=FakeLauncher())
    assert refused.returncode == 2 and "--bind-to core" in refused.stderr
    over = options({"bind_to": None, "launches": "auto"}, None, oversubscribed=True)
    assert not any("--bind-to core" in remedy(kind, over) for kind in KINDS)
    assert "--bind-to core" in remedy("wide", dict(over, oversubscribed=False))


def test_ranks_the_launcher_bound_unasked_count_as_bound():
    one_cpu = {"placement": [{"binding": "0"}, {"binding": "1"}]}  # Open MPI's default
    spread = {"placement": [{"binding": "0-1"}, {"binding": "0-1"}]}  # MPICH's
    assert options({"bind_to": None}, one_cpu)["bound"]
    assert not options({"bind_to": None}, spread)["bound"]
    assert options({"bind_to": "core"}, spread)["bound"]
    assert "--bind-to" not in remedy("wide", options({"bind_to": None, "launches": "auto"},
                                                     one_cpu))


def _warning(kind, message, severity):
    return WarningRow(None, kind, message, severity)


def test_three_short_lines_per_kind_worst_cases_first():
    found = [(_warning("drift", f"+{d}%", d / 100), f"case {d}", {}) for d in (12, 40, 15, 90, 11)]
    found.append((_warning("oversubscribed", "3 ranks", 3.0), None, {}))
    lines = block(found, cores=2)
    assert len(lines) == 6 and lines[0].startswith("flag oversubscribed: 1 run, more ranks "
                                                   "than cores")
    at = next(i for i, line in enumerate(lines) if line.startswith("flag drift:"))
    head, worst, fix = lines[at:at + 3]
    assert head.startswith("flag drift: 5 cases, ")
    assert worst.startswith("  worst: case 90: +90%")
    assert worst.index("case 90: +90%") < worst.index("case 40") < worst.index("case 15")
    assert "case 12" not in worst and worst.endswith("and 2 more")
    assert fix == ("  remedy: rerun on a quieter machine; the launch-aware interval "
                   "includes drift between launches")
    assert block([]) == []


def test_a_command_of_several_runs_prints_one_block(fake_mpi, db):
    done = commscope("run", "pingpong", "--np", "2,4", "--sizes", "8,1K", "--launches", "1",
                     "--mpi", fake_mpi, "--db", db, launcher=FakeLauncher(spread=0.5))
    assert done.returncode == 0, done.stderr
    err = done.stderr.splitlines()
    # one line per run on how its variation splits, then the flags, each kind once
    assert [line.split(":")[0] for line in err if " a launch median varies " in line] == \
        ["run 1", "run 2"]
    kinds = [line.split(":")[0] for line in err if line.startswith("flag ")]
    assert sorted(kinds) == ["flag one_launch", "flag oversubscribed"]
    assert any(line.startswith("flag one_launch: 2 runs") for line in err)
    assert any(line.startswith("flag oversubscribed: 1 run") for line in err)
    # what holds for a whole run flags none of its cases
    data = json.loads(commscope("results", "show", "1,2", "--db", db, "--json").stdout)
    assert [c["flags"] for c in data["cases"]] == [[]] * 4
    shown = commscope("results", "show", "1", "--db", db)
    assert "flag one_launch: 1 run" in shown.stdout


def test_one_launch_takes_the_stores_history_of_the_same_case_and_says_so(fake_mpi, db):
    def run(*args):
        done = commscope("run", "pingpong", "--sizes", "8", "--iters", "20", *args,
                         "--mpi", fake_mpi, "--db", db, "--json", launcher=FakeLauncher())
        assert done.returncode == 0, done.stderr
        return done
    alone = json.loads(run("--launches", "1").stdout)["cases"][0]
    assert alone["ci_basis"] == "one launch" and alone["between_launch_cv"] is None
    run("--launches", "3")
    after = run("--launches", "1")
    (case,) = json.loads(after.stdout)["cases"]
    assert case["ci_basis"] == "history" and case["between_launch_cv"] > 0
    assert case["ci_high_s"] - case["ci_low_s"] > alone["ci_high_s"] - alone["ci_low_s"]
    assert "one_launch" not in after.stderr
    # another placement is another case: its history is not this one's
    other = json.loads(run("--launches", "1", "--bind-to", "core").stdout)["cases"][0]
    assert other["ci_basis"] == "one launch"


def test_a_host_that_switches_between_two_states_is_told(fake_mpi, db):
    def run(scale):
        done = commscope("run", "pingpong", "--sizes", "8", "--iters", "20", "--mpi", fake_mpi,
                         "--db", db, "--json",
                         launcher=FakeLauncher(scale=scale))
        assert done.returncode == 0, done.stderr
        return done
    for scale in (1, 1, 1, 3, 3, 1):  # the fake host is 3x slower in some commands
        run(scale)
    done = run(3)
    (case,) = json.loads(done.stdout)["cases"]
    (low, n_low), (high, n_high) = case["levels"]
    assert (n_low, n_high) == (4, 2) and 2.5 < high / low < 3.5
    assert "levels: 1 case" in done.stderr and "the higher" in done.stderr
    assert "the interval is that of the level this command fell in" in done.stderr
    # its state's interval, not one across both states 3x apart
    assert case["ci_high_s"] / case["median_s"] < 1.5, case


def test_bandwidth_above_its_copy_ceiling_is_a_finding():
    from dataclasses import replace

    from commscope.stats.advice import _above_ceiling, remedy
    from commscope.stats.summary import of_medians
    s = replace(of_medians(()), ceiling_fraction=1.31, bandwidth_MBps=26_200.0,
                ceiling_MBps=20_000.0)
    kind, message, severity = _above_ceiling(s, {})
    assert kind == "above_ceiling" and "1.31x" in message and severity == 1.31
    assert _above_ceiling(replace(s, ceiling_fraction=0.97), {}) is None
    assert _above_ceiling(replace(s, ceiling_fraction=None), {}) is None
    assert "--cold-cache" in remedy("above_ceiling", {})
    assert "--cold-cache" not in remedy("above_ceiling", {"cold_cache": True})


def test_verbs_without_a_quality_block_say_oversubscribed_in_one_line(fake_mpi, db):
    """check, tune and compare judge what they measured or read: where ranks outnumbered
    cores, one line says so and how to avoid it."""
    common = ["--np", "4", "--sizes", "8", "--launches", "2", "--mpi", fake_mpi, "--db", db]
    said = []
    for args in (["check", "allreduce<=reduce+bcast"], ["tune", "allreduce", "-o", os.devnull],
                 ["run", "allreduce"]):
        done = commscope(*args, *common, launcher=FakeLauncher())
        assert done.returncode in (0, 1, 3), done.stderr
        said.append([line for line in done.stderr.splitlines() if "oversubscribed (" in line])
    done = commscope("compare", "2", "3", "--db", db)
    assert done.returncode in (0, 1, 3), done.stderr
    said.append([line for line in done.stderr.splitlines() if "oversubscribed (" in line])
    check, tune, run, compare = said
    assert check == ["commscope: oversubscribed (up to 4 ranks in run 1): more ranks than "
                     "cores: latencies include time-slicing; run at most one rank per core, "
                     "or spread them with --hosts"]
    assert len(tune) == 1 and "in run 2)" in tune[0]
    assert run == []  # run's quality block says it
    assert len(compare) == 1 and "in runs 2, 3)" in compare[0]


def test_a_launch_in_another_state_is_named_left_out_and_replaced(fake_mpi, db):
    """Launch 3 of 3 ran 2.5x slower at every size (a machine state): it is named at every
    case, left out of the figures, and a fourth launch measured in its place, so no
    interval is wider than x/2 for it (before: every case was, its flag broad)."""
    launcher = FakeLauncher(slow_launch=(3, 2.5))
    done = commscope("run", "pingpong", "--sizes", "8:1KiB", "--launches", "3", "--json",
                     "--mpi", fake_mpi, "--db", db, launcher=launcher)
    assert done.returncode == 0, done.stderr
    assert len(launcher.launched) == 4
    cases = json.loads(done.stdout)["cases"]
    for c in cases:
        (odd,) = c["other_state"]
        assert odd["launch"] == 3 and odd["cause"] == "state" and 2.2 < odd["ratio"] < 2.8
        assert odd["cases_off"] == odd["cases"] == 8 and "other_state" in c["flags"]
        assert c["launches"] == 3 and c["ci_high_s"] / c["ci_low_s"] < 4
        assert "broad" not in c["flags"]
    assert "flag other_state: 8 cases" in done.stderr
    assert re.search(r"launch 3 ran 2\.\dx slower at 8 of the run's 8 cases", done.stderr)


def test_a_launch_off_at_a_few_sizes_is_kept_and_its_interval_says_why(fake_mpi, db):
    """Two launches of four 2.5x slower at every size: not a strict minority of three
    launches to one, so none is left out, and the broad flag names the launches' span."""
    done = commscope("run", "pingpong", "--sizes", "8:1KiB", "--launches", "2", "--json",
                     "--mpi", fake_mpi, "--db", db, launcher=FakeLauncher(slow_launch=(2, 2.5)))
    assert done.returncode == 0, done.stderr
    cases = json.loads(done.stdout)["cases"]
    assert all(c["other_state"] == [] and c["launches"] == 2 for c in cases)
    assert all("broad" in c["flags"] or c["disagree"] for c in cases)


def test_a_quiet_run_has_no_interval_wider_than_x_2(fake_mpi, db):
    done = commscope("run", "pingpong", "--sizes", "8:1KiB", "--launches", "3", "--json",
                     "--mpi", fake_mpi, "--db", db, launcher=FakeLauncher())
    assert done.returncode == 0, done.stderr
    assert not any("broad" in c["flags"] for c in json.loads(done.stdout)["cases"])


def test_an_app_runs_remedies_name_only_options_app_takes():
    """`commscope app` has neither --launches nor --max-time: no remedy of its runs names
    them, whatever the kind."""
    from commscope.stats.advice import KINDS, PARTS, _part_remedy, options, remedy

    for iters in (None, 20):
        app = options({"launches": 1, "iters": iters}, None, False, "application")
        said = [remedy(kind, app, 2) for kind in KINDS] + [_part_remedy(p, app) for p in PARTS]
        assert not [s for s in said if "--launches" in s or "--max-time" in s], said
    run = options({"launches": 1}, None, False, "pt2pt")  # a kernel's run keeps them
    assert "--launches 1" in remedy("wide", run)


def test_the_precision_goals_outcome_is_stated_and_agrees_with_the_export(fake_mpi, db):
    """How many cases met --precision, and the widest: counted as the export counts, for
    a goal every case met and one none did."""
    for run, goal in ((1, 60), (2, 1)):
        done = commscope("run", "pingpong", "--sizes", "8,1K,64K", "--precision", f"{goal}%",
                         "--launches", "3", "--mpi", fake_mpi, "--db", db,
                         launcher=FakeLauncher(slow_launch=(2, 1.02)))
        assert done.returncode == 0, done.stderr
        (said,) = [line for line in done.stderr.splitlines() if "precision goal" in line]
        rows = list(csv.DictReader(io.StringIO(commscope(
            "results", "export", str(run), "--csv", "--db", db).stdout)))
        widths = [float(r["precision"]) for r in rows]
        met = sum(w <= goal / 100 for w in widths)
        assert met == (len(rows) if goal == 60 else 0), widths
        assert f"run {run}: precision goal +-{goal}%: met by {met} of {len(rows)} cases; " \
               f"the widest +-{100 * max(widths):.1f}%" in said
