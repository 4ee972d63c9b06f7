"""`commscope report`: one self-contained HTML page of short runs, escaped, viewable offline,
rendered by a real browser. The runs are the fake launcher's (tests/fakempi): what is
tested is the report of stored data; reports of real MPI runs are made in test_mpi4,
test_loggp_maxrate and test_study."""

from __future__ import annotations

import base64
import html
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from PIL import Image  # installed with matplotlib

from conftest import commscope, one_line_error
from commscope.store import Store
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


def test_single_pingpong_run(single):
    page = Page(single[1])
    # grouped by kernel, in the order of the runs; one launch has no launches figure
    assert page.sections == ["kernel-pingping", "pingping-size", "pingping-distributions",
                             "pingping-ceiling", "kernel-pingpong", "pingpong-size",
                             "pingpong-launches", "pingpong-distributions", "pingpong-ceiling",
                             "provenance"]
    assert page.headings["kernel-pingpong"] == "pingpong (run 2)"
    assert page.headings["pingpong-size"] == "Latency and bandwidth vs message size"
    assert page.headings["provenance"] == "Provenance and warnings"
    assert [len(page.images.get(s, [])) for s in page.sections] == [0, 1, 1, 1, 0, 1, 1, 1, 1, 0]
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
    # advection solve's one launch has no between-launch spread); ranks: ring at 2 and 3.
    counts = {s: len(page.images.get(s, [])) for s in page.sections}
    assert counts == {
        "kernel-pingpong": 0, "pingpong-size": 1, "pingpong-launches": 1,
        "pingpong-distributions": 1, "pingpong-ceiling": 1,
        "kernel-bw": 0, "bw-size": 1, "bw-launches": 1, "bw-distributions": 1, "bw-ceiling": 1,
        "kernel-fanin": 0, "fanin-size": 1, "fanin-launches": 1, "fanin-distributions": 1,
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
    warnings = [w["message"] for run in range(1, 9) for w in store.warnings(run)]
    for message in warnings:
        assert html.escape(message) in text
    # the quality block the terminal printed, over all the report's runs
    assert html.escape(f"quality: {len(warnings)} warnings over ") in text
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
    assert dom.headings == source.headings and len(dom.headings) == 30
    assert f"images {images} decoded {images}" in done.stdout

    shot = tmp_path / "shot.png"
    done = _browser(binary, f"--screenshot={shot}", "--window-size=1200,2400", report.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    with Image.open(shot) as picture:
        assert picture.size == (1200, 2400)
        # Plotted lines, bands and text give thousands of colours; a blank page a handful.
        assert len(picture.convert("RGB").getcolors(1 << 20)) > 500
