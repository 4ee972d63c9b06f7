"""`commscope report`: one self-contained HTML page of short runs, escaped, viewable offline,
rendered by a real browser. The runs are the fake launcher's (tests/fakempi): what is
tested is the report of stored data; reports of real MPI runs are made here (`make demo`'s
commands, smaller), in test_mpi4, test_loggp_maxrate and test_study."""

from __future__ import annotations

import base64
import dataclasses
import html
import json
import math
import re
import shutil
import subprocess
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from PIL import Image  # installed with matplotlib

from conftest import EMBEDDED, commscope, one_line_error
from commscope.stats.advice import KINDS
from commscope.views.report import launches, size
from commscope.views.report.data import combined, grouped, load
from commscope.views.report.html import FINDINGS_BORDER
from commscope.store.store import Store
from fakempi.inprocess import FakeLauncher

SHORT = ("--sizes", "8,1K,64KiB", "--iters", "10")  # three sizes: the fewest a fit takes
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
NAME_WITH_MARKUP = "<script>alert(1).db"  # a results file name is part of the stored command


class Page(HTMLParser):
    """The parts of a report the tests read: section ids and headings, images, links, tags."""

    def __init__(self, text: str):
        super().__init__()
        self.section = None
        self.sections: list[str] = []
        self.headings: dict[str, str] = {}
        self.images: dict[str, list[str]] = {}
        self.links: list[str] = []
        self.tags: set[str] = set()
        self._in_heading = False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.add(tag)
        if tag == "section":
            self.section = a["id"]
            self.sections.append(self.section)
        # a section's own heading: h2, or h3 for a section inside a kernel's group
        self._in_heading = tag in ("h2", "h3") and self.section not in self.headings
        if tag == "img":
            self.images.setdefault(self.section, []).append(a["src"])
        self.links += [a[k] for k in ("src", "href") if k in a]

    def handle_endtag(self, tag):
        if tag in ("h2", "h3"):
            self._in_heading = False

    def handle_data(self, data):
        if self._in_heading:
            self.headings[self.section] = data


def png_size(src: str) -> tuple[int, int]:
    """Width and height of a data-URI PNG, from its decoded header."""
    prefix = "data:image/png;base64,"
    assert src.startswith(prefix)
    data = base64.b64decode(src[len(prefix):], validate=True)
    assert data[:8] == PNG_SIGNATURE
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


class Cells(HTMLParser):
    """Each table row's cell texts, by the innermost section holding the table (None: a
    table outside every section, as the runs' overview)."""

    def __init__(self, text: str):
        super().__init__()
        self.rows: dict[str | None, list[list[str]]] = {}
        self._sections: list[str] = []
        self._row: list[str] = []
        self._cell: list[str] | None = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if tag == "section":
            self._sections.append(dict(attrs)["id"])
        elif tag == "tr":
            self._row = []
            self.rows.setdefault(self._sections[-1] if self._sections else None,
                                 []).append(self._row)
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "section":
            self._sections.pop()
        elif tag in ("td", "th"):
            self._row.append("".join(self._cell))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def measure(fake_mpi: Path, db: Path, *args) -> None:
    done = commscope(*args, "--db", db, "--mpi", fake_mpi, launcher=FakeLauncher())
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def single(tmp_path_factory, fake_mpi):
    """A pingping run, then a pingpong run whose command line holds markup, and their report
    (no RUN: the whole file)."""
    where = tmp_path_factory.mktemp("single")
    db = where / NAME_WITH_MARKUP
    measure(fake_mpi, db, "run", "pingping", "--sizes", "8", "--iters", "10", "--launches", "1")
    measure(fake_mpi, db, "run", "pingpong", *SHORT)
    out = where / "single.html"
    done = commscope("report", "-o", out, "--db", db)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"report of run 1, 2 written to {out}"
    return db, out.read_text()


@pytest.fixture(scope="module")
def mixed(tmp_path_factory, fake_mpi):
    """pingpong, bw, fanin at 3 ranks, allreduce and ring at 2 and 3, an advection solve."""
    where = tmp_path_factory.mktemp("mixed")
    db = where / "mixed.db"
    measure(fake_mpi, db, "run", "pingpong", *SHORT)  # run 1
    measure(fake_mpi, db, "run", "bw", *SHORT)  # 2
    measure(fake_mpi, db, "run", "fanin", "--np", "3", *SHORT)  # 3
    measure(fake_mpi, db, "run", "allreduce", "--np", "2,3", *SHORT)  # 4, 5
    measure(fake_mpi, db, "run", "ring", "--np", "2,3", *SHORT)  # 6, 7
    measure(fake_mpi, db, "app", "advection2d", "--n", "32", "--np", "2", "--steps", "10",
            "--iters", "6")
    out = where / "mixed.html"
    done = commscope("report", "1", "2-5", "6,7", "8", "-o", out, "--db", db)
    assert done.returncode == 0, done.stderr
    return db, out


SWITCH_BYTES = 16 * 1024


def _switch(_value, nbytes: int) -> float:
    """The fake's time 3x from SWITCH_BYTES on: a protocol switch for the fits to find."""
    return 3.0 if nbytes >= SWITCH_BYTES else 1.0


@pytest.fixture(scope="module")
def demo(tmp_path_factory, fake_mpi):
    """`make demo`'s commands on the fake launcher, in 3 launches: bw 1 KiB to 4 MiB (run
    1), pingpong 0 B to 4 MiB standard and synchronous with a switch at 16 KiB (run 2),
    fit, and the report of the whole file."""
    where = tmp_path_factory.mktemp("demo")
    db = where / "demo.db"
    measure(fake_mpi, db, "run", "bw", "--np", "2", "--sizes", "1KiB:4MiB", "--launches", "3")
    done = commscope("run", "pingpong", "--np", "2", "--sizes", "0:4MiB", "--modes",
                     "standard,synchronous", "--launches", "3", "--db", db, "--mpi", fake_mpi,
                     launcher=FakeLauncher(factor=_switch))
    assert done.returncode == 0, done.stderr
    assert commscope("fit", "--db", db).returncode == 0
    out = where / "commscope-report.html"
    done = commscope("report", "-o", out, "--db", db)
    assert done.returncode == 0, done.stderr
    return db, out


def test_single_pingpong_run(single):
    page = Page(single[1])
    # grouped by kernel, in the order of the runs; one launch has no launches figure
    assert page.sections == ["findings", "kernel-pingping", "pingping-size",
                             "pingping-distributions", "pingping-ceiling", "kernel-pingpong",
                             "pingpong-size",
                             "pingpong-launches", "pingpong-distributions", "pingpong-ceiling",
                             "provenance"]
    assert page.headings["kernel-pingpong"] == "pingpong (run 2)"
    assert page.headings["pingpong-size"] == "Latency and bandwidth vs message size"
    assert page.headings["provenance"] == "Provenance and warnings"
    # pingpong's size section: its figure and the strip plot of its 3 launches; pingping's
    # one launch has no strip
    assert [len(page.images.get(s, [])) for s in page.sections] == [0, 0, 1, 1, 1, 0, 2, 1, 1, 1,
                                                                     0]
    for src in page.images["pingpong-size"] + page.images["pingpong-distributions"]:
        width, height = png_size(src)
        assert width > 300 and height > 200
    assert "Runs 1, 2 (every run in the file)" in single[1]
    assert "one line" in single[1]  # the Hockney fit's table row


def test_command_line_is_escaped(single):
    text = single[1]
    assert "<script" not in text.lower()
    assert "&lt;script&gt;alert(1).db" in text
    assert "commscope run pingpong --sizes 8,1K,64KiB --iters 10 --db" in text


def test_sweep_is_chosen_and_its_plan_name_escaped(tmp_path, fake_mpi):
    plan = tmp_path / "plan.toml"
    plan.write_text('name = "<b>bold</b> & co"\niters = 10\n[[experiment]]\n'
                    'kernel = "pingping"\nsizes = "8,1K,64KiB"\n')
    db = tmp_path / "sweep.db"
    measure(fake_mpi, db, "sweep", plan)
    out = tmp_path / "sweep.html"
    done = commscope("report", "--sweep", "1", "-o", out, "--db", db)
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert "Runs 1 (as given)" in text
    assert 'sweep 1 &quot;&lt;b&gt;bold&lt;/b&gt; &amp; co&quot; (plan ' in text
    assert "<b>" not in text


def test_mixed_set_has_every_section(mixed):
    page = Page(mixed[1].read_text())
    # One group per kernel in the order of the runs, each with the sections its runs have;
    # figures per configuration, not per case: each P a line or row of one figure (the
    # advection solve's one launch has no between-launch spread); ranks: ring at 2 and 3;
    # size: the figure and the strip plot of the launch medians.
    counts = {s: len(page.images.get(s, [])) for s in page.sections}
    assert counts == {
        "findings": 0, "kernel-pingpong": 0, "pingpong-size": 2, "pingpong-launches": 1,
        "pingpong-distributions": 1, "pingpong-ceiling": 1,
        "kernel-bw": 0, "bw-size": 2, "bw-launches": 1, "bw-distributions": 1, "bw-ceiling": 1,
        "kernel-fanin": 0, "fanin-size": 2, "fanin-launches": 1, "fanin-distributions": 1,
        "fanin-ranks": 1, "fanin-ceiling": 1,
        "kernel-allreduce": 0, "allreduce-launches": 1, "allreduce-distributions": 1,
        "allreduce-scaling": 1, "allreduce-ceiling": 0,
        "kernel-ring": 0, "ring-launches": 1, "ring-distributions": 1, "ring-ranks": 2,
        "ring-scaling": 1, "ring-ceiling": 1,
        "kernel-advection2d": 0, "advection2d-advection": 1, "provenance": 0}
    assert page.headings["kernel-allreduce"] == "allreduce (runs 4, 5)"
    assert page.headings["bw-ceiling"] == "Bandwidth vs the copy ceiling"
    for images in page.images.values():
        for src in images:
            assert min(png_size(src)) > 100


def test_mixed_set_shows_models_provenance_and_every_warning(mixed):
    db, out = mixed
    text = out.read_text()
    assert "t(m) from the fit of run 1 (pingpong standard, 2 ranks" in text  # the ring model
    assert "L2 error" in text and "communicate ms" in text
    for run in range(1, 9):
        assert f"<h3>Run {run}: " in text
    store = Store(db)
    warnings = [w.message for run in range(1, 9) for w in store.warnings(run)]
    for message in warnings:
        assert html.escape(message) in text
    # the quality block the terminal printed, over all the report's runs
    assert html.escape("run 8: a launch median varies ") in text
    assert "flag " in text and "  remedy: " in text
    assert "Open MPI" in text or "MPICH" in text
    assert "library_transport" in text and "timer" in text


def test_no_network_references(single, mixed):
    for text in (single[1], mixed[1].read_text()):
        page = Page(text)
        assert not page.tags & {"script", "link", "iframe", "object", "embed"}
        assert page.links
        for link in page.links:
            assert link.startswith(("data:image/png;base64,", "#")), link[:80]
        assert "http://" not in text and "https://" not in text


def test_bad_input_is_one_line(single, tmp_path):
    db = single[0]
    out = tmp_path / "r.html"
    assert "no run 99" in one_line_error(commscope("report", "99", "-o", out, "--db", db))
    assert "--sweep 4" in one_line_error(commscope("report", "--sweep", "4", "-o", out,
                                                   "--db", db))
    missing = tmp_path / "no-such-dir" / "r.html"
    assert "-o" in one_line_error(commscope("report", "-o", missing, "--db", db))
    assert "is a directory" in one_line_error(commscope("report", "-o", tmp_path, "--db", db))
    assert "no such results file" in one_line_error(
        commscope("report", "-o", out, "--db", tmp_path / "none.db"))
    assert not out.exists()


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    pytest.skip("no chromium binary on PATH: `make test` installs Debian's chromium when run "
                "as root; else install it (apt-get install chromium) to run the browser test")


# Appended to a copy of the report (the report itself has no script): after the page has
# loaded, how many images the browser decoded to a picture with a width.
DECODE_CHECK = """<script>
addEventListener("load", () => {
  const images = [...document.images];
  const decoded = images.filter(i => i.complete && i.naturalWidth > 0).length;
  const out = document.createElement("pre");
  out.id = "decoded";
  out.textContent = `images ${images.length} decoded ${decoded}`;
  document.body.append(out);
});
</script></body>"""


def _browser(binary: str, *args) -> subprocess.CompletedProcess:
    return subprocess.run([binary, "--headless", "--no-sandbox", "--disable-gpu", *args],
                          capture_output=True, text=True, timeout=180)


def test_browser_renders_report(mixed, tmp_path):
    binary = _chromium()
    report = mixed[1]
    source = Page(report.read_text())
    images = sum(len(v) for v in source.images.values())
    checked = tmp_path / "checked.html"
    checked.write_text(report.read_text().replace("</body>", DECODE_CHECK))
    done = _browser(binary, "--virtual-time-budget=10000", "--dump-dom", checked.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    dom = Page(done.stdout)
    assert dom.headings == source.headings and len(dom.headings) == 31
    assert f"images {images} decoded {images}" in done.stdout

    shot = tmp_path / "shot.png"
    done = _browser(binary, f"--screenshot={shot}", "--window-size=1200,2400", report.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    with Image.open(shot) as picture:
        assert picture.size == (1200, 2400)
        # Plotted lines, bands and text give thousands of colours; a blank page a handful.
        assert len(picture.convert("RGB").getcolors(1 << 20)) > 500


# Appended to a copy of the report: where the findings box and its first row are once the
# page has loaded, whether it is shown, and the window's size.
POSITION_CHECK = """<script>
addEventListener("load", () => {
  const box = document.getElementById("findings");
  const r = box.getBoundingClientRect();
  const row = box.querySelector("tbody tr").getBoundingClientRect();
  const style = getComputedStyle(box);
  const out = document.createElement("pre");
  out.id = "position";
  out.textContent = `findings top ${r.top} width ${r.width} first row bottom ${row.bottom} ` +
    `shown ${style.display !== "none" && style.visibility === "visible"} ` +
    `window ${innerWidth}x${innerHeight}`;
  document.body.append(out);
});
</script></body>"""
SCREEN = (1280, 800)


def in_first_screen(report: Path, where: Path) -> None:
    """The findings box and its first row lie in the first screen at 1280x800, shown; a
    screenshot of that screen is a page, not blank, with the box's frame on it."""
    binary = _chromium()
    checked = where / "position.html"
    checked.write_text(report.read_text().replace("</body>", POSITION_CHECK))
    window = f"--window-size={SCREEN[0]},{SCREEN[1]}"
    done = _browser(binary, window, "--virtual-time-budget=10000", "--dump-dom",
                    checked.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r"findings top (\S+) width (\S+) first row bottom (\S+) shown (\w+) "
                      r"window (\d+)x(\d+)", done.stdout)
    assert found, done.stdout[-2000:]
    top, width, row_bottom = map(float, found.group(1, 2, 3))
    assert found[4] == "true" and width > 600
    assert 0 <= top < row_bottom <= min(SCREEN[1], int(found[6]))

    shot = where / "first-screen.png"
    done = _browser(binary, f"--screenshot={shot}", window, report.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    with Image.open(shot) as picture:
        assert picture.size == SCREEN
        colours = picture.convert("RGB").getcolors(1 << 20)
    assert len(colours) > 100  # text on a page; a blank screen has a handful
    frame = tuple(int(FINDINGS_BORDER[i:i + 2], 16) for i in (1, 3, 5))
    # the box's 2 px frame: at least its top edge across the box's width
    assert sum(n for n, rgb in colours if rgb == frame) >= 2 * 600


def json_out(db: Path, key: str, *args) -> list[dict]:
    """A verb's --json list under `key`."""
    done = commscope(*args, "--json", "--db", db)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)[key]


def us(seconds: float) -> str:  # as `results show` prints a time
    return f"{seconds * 1e6:.3f}"


def mbps(rate: float) -> str:  # and a bandwidth
    return f"{rate:,.1f}"


# Kernels whose figure is a bandwidth (their --describe entries say so): no latency.
BANDWIDTH_KERNELS = {"bw", "bibw", "mbw_mr"}


def interval_text(value: str, low: str | None, high: str | None) -> str:
    """A figure and its interval; the figure alone where its launches disagree beyond any
    interval (replication.supported: no interval wider than x/10)."""
    return value if low is None or high is None else f"{value} ({low}-{high})"


def latency_text(case: dict) -> str:
    """A case's median and interval in µs, as `results show` and the findings print them."""
    if case["ci_low_s"] is None:
        return us(case["median_s"])
    return interval_text(us(case["median_s"]), us(case["ci_low_s"]), us(case["ci_high_s"]))


def expected_figures(kernel: str, found: list[dict]) -> list[str]:
    """The peak bandwidth with its interval (the latency's turned over) and size, its
    fraction of the copy ceiling, and the latency at the smallest size with its interval
    (a bandwidth kernel's time per window slot, labelled so), from `results show --json`'s
    cases of one configuration."""
    from commscope.system.sizes import format_bytes
    peak = max((c for c in found if c["bytes"] > 0 and c["bandwidth_MBps"] is not None),
               key=lambda c: c["bandwidth_MBps"])
    rate, median = peak["bandwidth_MBps"], peak["median_s"]
    small = min(found, key=lambda c: c["bytes"])
    fraction = peak["ceiling_fraction"]
    latency = f"{latency_text(small)} at {format_bytes(small['bytes'])}"
    rates = (None, None) if peak["ci_low_s"] is None else \
        (mbps(rate * median / peak["ci_high_s"]), mbps(rate * median / peak["ci_low_s"]))
    return [f"{interval_text(mbps(rate), *rates)} at {format_bytes(peak['bytes'])}",
            "-" if fraction is None else f"{fraction * 100:.0f}%",
            f"time per window slot {latency}" if kernel in BANDWIDTH_KERNELS else latency]


def segment_text(fit: dict, i: int) -> str:
    from commscope.system.sizes import format_bytes
    segments = fit["segments"]
    sizes = (f"{format_bytes(segments[i]['from_bytes'])} to "
             f"{format_bytes(segments[i]['to_bytes'])}")
    return (f"the Hockney line, {sizes}" if len(segments) == 1 else
            f"segment {i % len(segments) + 1} of {len(segments)}, {sizes}")


def expected_model(fit: dict) -> list[str]:
    """alpha of the fit's first segment and B of its last (`fit --json`; bytes per latency
    1, as for pingpong and bw), each with its interval and the sizes it covers."""
    first, last = fit["segments"][0], fit["segments"][-1]
    alpha = (interval_text(us(first["alpha_s"]), *map(us, first["alpha_ci_s"]))
             if first["alpha_s"] > 0 else "not identifiable (at its bound, 0)")
    rate = (interval_text(*(f"{v:,.0f}" if v is not None else "inf" for v in
                            (last["bandwidth_MBps"], *last["bandwidth_ci_MBps"])))
            if last["bandwidth_identifiable"] else
            f"not identifiable (at copy bound {last['bandwidth_bound_MBps']:,.0f})"
            if last["at_bound"] else "not identifiable")
    return [f"{alpha}; {segment_text(fit, 0)}", f"{rate}; {segment_text(fit, -1)}"]


def check_findings(db: Path, text: str, runs: str) -> None:
    """The findings box opens the page, before the runs and the contents, with one row per
    configuration whose figures are `results show`'s and whose model is `fit`'s."""
    assert Page(text).sections[0] == "findings"
    assert text.index('<section id="findings">') < text.index("<th>run</th>") \
        < text.index("<nav>")
    cases = json_out(db, "cases", "results", "show", runs)
    fits = json_out(db, "fits", "fit", runs)
    printed = commscope("results", "show", runs, "--db", db).stdout
    configurations: dict[tuple, list[dict]] = {}
    for c in cases:
        configurations.setdefault((c["kernel"], c["send_mode"], c["ranks"],
                                   json.dumps(c["params"], sort_keys=True), c["sync"],
                                   c["transport"]), []).append(c)
    rows = Cells(text).rows["findings"][1:]
    assert len(rows) == len(configurations) >= 3
    for (kernel, mode, ranks, *_), found in configurations.items():
        name = " ".join(filter(None, (kernel, mode, f"np{ranks}")))
        (row,) = [r for r in rows if r[0].startswith(name + " ")]
        figures = expected_figures(kernel, found)
        assert row[1:4] == figures, name
        # the same texts as the terminal's table prints them
        assert figures[0].split(" (")[0] in printed
        latency = figures[2].removeprefix("time per window slot ").split(" at ")[0]
        # its interval, or the figure alone where the launches disagree beyond one
        assert latency.split(" (")[-1].rstrip(")") in printed
        (fit,) = [f for f in fits if f.get("kernel") == kernel and f.get("send_mode") == mode
                  and f.get("ranks") == ranks]
        assert row[4:] == expected_model(fit), name


def test_findings_open_the_demo_report(demo):
    db, out = demo
    check_findings(db, out.read_text(), "1,2")
    # the fake's switch: alpha below it, B above it
    assert re.search(r"segment 1 of 2, 0 B to 8 KiB</td><td[^>]*>[0-9,]+ \([0-9,]+-[0-9,]+\); "
                     r"segment 2 of 2, 16 KiB to 4 MiB<", out.read_text())


def test_findings_are_in_the_first_screen(demo, tmp_path):
    in_first_screen(demo[1], tmp_path)


def findings_row(text: str, name: str) -> list[str]:
    (row,) = [r for r in Cells(text).rows["findings"][1:] if r[0].startswith(name + " ")]
    return row


def test_findings_give_bw_the_large_size_segment_and_no_latency(fake_mpi, tmp_path):
    """bw with a switch at 16 KiB: B is the last segment's (not the one line over all sizes,
    which mixes both protocols), alpha the first's, and bw's time per window slot is not
    shown as a latency."""
    db = tmp_path / "bw.db"
    done = commscope("run", "bw", "--np", "2", "--sizes", "1KiB:4MiB", "--launches", "3",
                     "--db", db, "--mpi", fake_mpi, launcher=FakeLauncher(factor=_switch))
    assert done.returncode == 0, done.stderr
    out = tmp_path / "bw.html"
    assert commscope("report", "-o", out, "--db", db).returncode == 0
    (fit,) = json_out(db, "fits", "fit", "1")
    first, last = fit["segments"][0], fit["segments"][-1]
    assert len(fit["segments"]) == 2 and last["from_bytes"] == SWITCH_BYTES
    row = findings_row(out.read_text(), "bw np2")
    rate = f"{last['bandwidth_MBps']:,.0f}"
    assert row[5].startswith(f"{rate} (") and row[5].endswith("segment 2 of 2, 16 KiB to 4 MiB")
    assert f"{fit['bandwidth_MBps']:,.0f}" != rate  # the one line would read otherwise
    assert row[4].startswith(f"{us(first['alpha_s'])} (") \
        and row[4].endswith("segment 1 of 2, 1 KiB to 8 KiB")
    # no latency: the time per window slot, labelled what it is
    assert row[3].startswith("time per window slot ") and row[3].endswith(" at 1 KiB")
    assert "latency" not in row[3]


def test_findings_take_a_collectives_latency_above_0_bytes(fake_mpi, tmp_path):
    """An allreduce at 0, 4, 64 B and 1 KiB whose 0 B call does next to nothing: the latency
    is the 4 B case's, as `results show` gives it."""
    db = tmp_path / "allreduce.db"
    done = commscope("run", "allreduce", "--np", "2", "--sizes", "0,4,64,1KiB", "--launches",
                     "3", "--db", db, "--mpi", fake_mpi,
                     launcher=FakeLauncher(factor=lambda _value, nbytes: 0.01 if nbytes == 0
                                           else 1.0))
    assert done.returncode == 0, done.stderr
    out = tmp_path / "allreduce.html"
    assert commscope("report", "-o", out, "--db", db).returncode == 0
    cases = {c["bytes"]: c for c in json_out(db, "cases", "results", "show", "1")}
    assert cases[0]["median_s"] < cases[4]["median_s"] / 10
    row = findings_row(out.read_text(), "allreduce np2")
    assert row[3] == f"{latency_text(cases[4])} at 4 B"
    assert row[4:] == ["-", "-"]  # shown against P: the model is in its own section


def test_strip_plot_marks_a_slow_launch(fake_mpi, tmp_path):
    """Three launches of pingpong, the second 2.5x slower: the size section's strip plot
    draws every launch median (those of `results show`), the second launch a cross at every
    size and no other, and names it under the figure."""
    from commscope.views.report import strip
    from commscope.figures.read import measured
    db = tmp_path / "slow.db"
    launcher = FakeLauncher(slow_launch=(2, 2.5))
    done = commscope("run", "pingpong", "--np", "2", "--sizes", "1KiB:1MiB", "--launches", "3",
                     "--db", db, "--mpi", fake_mpi, launcher=launcher)
    assert done.returncode == 0, done.stderr
    assert len(launcher.launched) == 4  # the slow launch named and replaced (states.py)
    out = tmp_path / "slow.html"
    assert commscope("report", "-o", out, "--db", db).returncode == 0
    text = out.read_text()
    page = Page(text)
    assert len(page.images["pingpong-size"]) == 2
    assert 'alt="launch medians vs size: pingpong' in text
    # the one launch named, at every size, about 2.5x the median launch (the others' noise)
    named = re.findall(r"Far from the other launches: ([^<]*)", text)
    assert len(named) == 1 and re.fullmatch(
        r"standard run 1 launch 2 at 11 sizes from 1 KiB to 1 MiB: "
        r"2\.[2-7]\dx to 2\.[2-7]\dx the median launch there\.", named[0]), named

    store = Store(db)
    data = load(store, [1])
    (config, panel), = grouped(size.size_cases(data), send_mode=False)
    drawn = strip.modes([(mode["send_mode"], cases, None) for mode, cases in grouped(panel)])
    (mode,) = drawn
    summaries = {s.bytes: s for _, s in measured(store, [1])}
    for nbytes, s in summaries.items():
        every = list(s.launch_medians_s) + [o.median_s for o in s.other_state]
        assert sorted(m[nbytes] for m in mode.medians.values()) == \
            pytest.approx(sorted(every), rel=1e-12)
    assert {(launch, nbytes) for launch, nbytes in mode.marked} == \
        {((1, 2), nbytes) for nbytes in summaries}
    ax = _drawn(strip.draw(drawn)).axes[0]
    (crosses,) = [line for line in ax.get_lines() if line.get_gid() == strip.FAR_GID]
    assert sorted(crosses.get_ydata()) == pytest.approx(
        sorted(m * 1e6 for m in mode.medians[(1, 2)].values()))
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_ylabel() == "launch median (µs)" and ax.get_xlabel() == "message size"


@pytest.mark.parametrize("launches, quiet_at_most", [(3, 0.025), (5, 0.012)])
def test_far_launches_on_simulated_medians(launches, quiet_at_most):
    """The strip plot's rule on normal log launch medians (23 sizes, SD 1): few quiet dots
    marked, and a launch 7 SDs slower at every size marked nearly everywhere, the others
    not (docs/report.md gives the rates)."""
    import numpy as np
    from commscope.views.report import strip
    rng = np.random.default_rng(37)
    sizes, draws = 23, 300
    quiet = slow_marked = others_marked = 0
    for _ in range(draws):
        logs = rng.normal(0, 1, (launches, sizes))
        as_medians = {(1, k): {b: math.exp(v) for b, v in enumerate(row)}
                      for k, row in enumerate(logs)}
        quiet += len(strip.far(as_medians))
        logs[0] += 7.0
        marked = strip.far({(1, k): {b: math.exp(v) for b, v in enumerate(row)}
                            for k, row in enumerate(logs)})
        slow_marked += sum(k == (1, 0) for k, _ in marked)
        others_marked += sum(k != (1, 0) for k, _ in marked)
    assert quiet / (draws * launches * sizes) <= quiet_at_most
    assert slow_marked / (draws * sizes) >= 0.95
    assert others_marked / (draws * (launches - 1) * sizes) <= 0.005


def test_far_launches_are_judged_within_a_segment():
    """Launches 25x as far apart in one segment as in the other: judged by one yardstick for
    all sizes, the noisier segment's quiet launches look far; by their segment's, not."""
    import numpy as np
    from commscope.views.report import strip
    rng = np.random.default_rng(38)
    spread = np.r_[np.full(8, 0.002), np.full(8, 0.05)]  # log SDs: sizes 0-7, then 8-15
    by_segment = one_pool = 0
    draws = 200
    for _ in range(draws):
        logs = rng.normal(0, 1, (3, 16)) * spread
        medians = {(1, k): {b: math.exp(v) for b, v in enumerate(row)}
                   for k, row in enumerate(logs)}
        by_segment += len(strip.far(medians, [0, 8]))
        one_pool += len(strip.far(medians))
    assert by_segment / (draws * 48) <= 0.045
    assert one_pool / (draws * 48) >= 0.15


@pytest.mark.mpi
def test_demo_report_answers_first_on_real_mpi(tmp_path):
    """`make demo` on real MPI, smaller: the findings box is `results show`'s figures and
    lies in the first screen. Open MPI alone, as `make demo` runs: the report reads the
    stored runs the same whichever library made them."""
    mpi_prefix = EMBEDDED
    _chromium()
    db = tmp_path / "demo.db"
    for args in (("bw", "--sizes", "1KiB:64KiB"),
                 ("pingpong", "--sizes", "0:64KiB", "--modes", "standard,synchronous")):
        done = commscope("run", *args, "--np", "2", "--launches", "3", "--mpi", mpi_prefix,
                         "--db", db)
        assert done.returncode == 0, done.stderr
    assert commscope("fit", "--db", db).returncode == 0
    out = tmp_path / "commscope-report.html"
    done = commscope("report", "-o", out, "--db", db)
    assert done.returncode == 0, done.stderr
    check_findings(db, out.read_text(), "1,2")
    in_first_screen(out, tmp_path)


def _drawn(fig):
    FigureCanvasAgg(fig).draw()
    return fig


def _only(data):
    """The one configuration (less the send mode) of the data's size cases."""
    (config, panel), = grouped(size.size_cases(data), send_mode=False)
    return config, panel


def test_log_axes_label_every_decade(demo):
    data = load(Store(demo[0]), [1])  # bw 1 KiB to 4 MiB
    found = size.fits(size.size_cases(data), data.history)
    fig = _drawn(size.draw(data, *_only(data), found))
    spans = []
    for ax in fig.axes:  # latency, bandwidth
        low, high = ax.get_ylim()
        labels = {t.get_text() for t in ax.get_yticklabels()
                  if low <= t.get_position()[1] <= high and t.get_text()}
        decades = [10.0 ** k for k in range(math.ceil(math.log10(low)),
                                            math.floor(math.log10(high)) + 1)]
        assert {f"{d:,.0f}" if d >= 1 else f"{d:g}" for d in decades} <= labels, labels
        assert len(labels) >= 3, labels  # an axis spanning few decades: 1, 2, 5 of each
        spans.append(len(decades))
    assert spans[0] >= 3  # the latency axis: 1 KiB to 4 MiB, decades of µs


def test_one_breakpoint_marker_per_switch(demo):
    db, out = demo
    data = load(Store(db), [2])  # pingpong, two modes, a switch at 16 KiB
    found = size.fits(size.size_cases(data), data.history)
    config, panel = _only(data)
    breaks = sorted(b.bytes for _, cases in grouped(panel)
                    for b in size.fit_of(found, cases[0]).fit.breakpoints)
    assert breaks == [SWITCH_BYTES, SWITCH_BYTES]
    for ax in _drawn(size.draw(data, config, panel, found)).axes:
        marks = [line for line in ax.get_lines() if line.get_gid() == size.BREAKPOINT]
        assert sorted(x for line in marks for x in line.get_xdata()) == breaks
        assert not ax.patches  # no shaded interval over the curves
    # the intervals: in the table and the figure's hover title
    assert re.search(r'title="breakpoints \(95% bootstrap CI\): standard 16 KiB \(\d+ KiB to '
                     r'\d+ KiB\); synchronous 16 KiB', out.read_text())


def test_zero_between_launch_cv_is_drawn_at_zero(demo):
    data = load(Store(demo[0]), [2])
    panel = [c for c in data.cases if c.bytes > 0]
    # a case whose launches differ no more than their samples say: its CV is 0
    first = panel[0]
    data.figure.update({c.id: dataclasses.replace(data.figure[c.id], between_launch_cv=0.0)
                        for c in panel if data.figure[c.id] is data.figure[first.id]})
    zeros, positive = [], []
    for config, cases in grouped(panel, ranks=True):
        for x in combined(data, cases):
            if x.between_launch_cv is not None:
                (zeros if x.between_launch_cv == 0 else positive).append(
                    (f"{config['send_mode']} np2 between", x.bytes, x.between_launch_cv))
    assert zeros and positive  # the fake's launches: a few differ less than samples say
    ax = _drawn(launches.draw(data, panel)).axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    for label, nbytes, cv in zeros + positive:
        x, y = lines[label].get_data()
        assert y[list(x).index(nbytes)] == pytest.approx(cv * 100)
    assert ax.get_yscale() == "symlog" and ax.get_ylim()[0] == 0
    assert [t.get_text() for t in ax.get_yticklabels() if t.get_position()[1] == 0] == ["0"]


def test_warnings_counted_by_kind(mixed):
    db, out = mixed
    (header, *rows) = Cells(out.read_text()).rows[None]  # the runs' overview
    column = header.index("warnings by kind")
    store, order = Store(db), list(KINDS)
    kinds_seen = set()
    for row in rows:
        counts = Counter(w.kind for w in store.warnings(int(row[0])))
        named = ", ".join(f"{k} {counts[k]}" for k in sorted(counts, key=order.index))
        assert row[column] == (named or "none")
        kinds_seen |= set(counts)
    # the fake's clean samples flag no case: what is left is about whole runs
    assert "one_launch" in kinds_seen <= {"oversubscribed", "one_launch"}


def test_findings_give_the_verdicts_of_check_and_health(fake_mpi, tmp_path):
    """A check whose left side is slow at 1 KiB and a health check with one slow node: the
    findings count the verdicts as the guidelines section does and name the drain."""
    db = tmp_path / "verdicts.db"
    done = commscope("check", "allreduce<=reduce+bcast", "--sizes", "256:4KiB", "--launches",
                     "4", "--mpi", fake_mpi, "--db", db,
                     launcher=FakeLauncher(factor=lambda value, nbytes: 1.4 if value is None
                                           and nbytes == 1024 else 1.0))
    assert done.returncode in (0, 1, 3), done.stderr
    rate = 5e7  # bytes/s of a pair, a quarter where node 1 takes part
    done = commscope("health", "--hosts", ",".join(f"h{i}" for i in range(8)), "--sizes",
                     "8,256KiB", "--mpi", fake_mpi, "--db", db,
                     launcher=FakeLauncher(rate=lambda x, y: rate / 4 if 1 in (x, y) else rate))
    assert done.returncode in (0, 1, 3), done.stderr
    out = tmp_path / "r.html"
    assert commscope("report", "-o", out, "--db", db).returncode == 0
    text = out.read_text()
    box = text[text.index('<section id="findings">'):text.index("</section>")]
    shown = re.findall(r"(\d+) of (\d+) sizes violated", text)  # the guidelines' captions
    violated, total = (sum(int(s[i]) for s in shown) for i in (0, 1))
    assert violated >= 1
    line = re.search(r"check, allreduce \(threshold 5%\): (\d+) verdicts: ([^<]*)", box)
    assert line and int(line[1]) == total and f"{violated} violated" in line[2], box
    assert re.search(r"health, run \d+ \(pairs over 8 nodes\): 1 suspect; drain: h1<", box)
