"""docs/examples/commscope-ci.yml: its structure, its commscope commands against
commscope's own parser, and (with MPI) its shell steps run in order as the file has them."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from junitparser import Failure, JUnitXml, TestSuite

from commscope.cli import parser
from conftest import EMBEDDED

WORKFLOW = Path(__file__).resolve().parents[1] / "docs" / "examples" / "commscope-ci.yml"
BIN = Path(sys.executable).parent
KNOWN = {"commscope", "python", "echo", "if", "then", "else", "fi"}
PINNED = re.compile(r"[\w.-]+/[\w./-]+@(v\d+(\.\d+){0,2}|[0-9a-f]{40})")
VARIABLE = re.compile(r"\$\{?(\w+)\}?")


def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())


def steps(flow: dict) -> list[dict]:
    (job,) = flow["jobs"].values()
    return job["steps"]


def commands(script: str) -> list[str]:
    """A `run:` script's command lines, continuation lines joined, comments left out."""
    lines = script.replace("\\\n", " ").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]


def test_workflow_structure():
    flow = workflow()
    assert "push" in flow.get("on", flow.get(True))  # YAML 1.1 reads a bare `on` as true
    env = flow["env"]
    assert {"SIZES", "NP", "LAUNCHES", "THRESHOLD", "DB"} <= set(env)
    defined = set(env) | {"GITHUB_ENV"}
    for step in steps(flow):
        assert ("uses" in step) != ("run" in step), step
        if "uses" in step:
            assert PINNED.fullmatch(step["uses"]), f"{step['uses']}: pin a version tag"
            continue
        # the MPI test below runs these steps as GitHub does when all before succeeded
        assert "if" not in step, step["name"]
        for line in commands(step["run"]):
            assert line.split()[0] in KNOWN, line
            assert set(VARIABLE.findall(line)) <= defined, line
        if "GITHUB_ENV" in step["run"]:  # what a step sets for the steps after it
            defined |= set(re.findall(r"(\w+)=", step["run"]))
    (reporter,) = [s["with"] for s in steps(flow) if s.get("uses", "").startswith("dorny/")]
    assert (reporter["path"], reporter["reporter"]) == ("compare.xml", "java-junit")
    charts = {s["with"]["output-file-path"]: s["with"]["tool"] for s in steps(flow)
              if s.get("uses", "").startswith("benchmark-action/github-action-benchmark@")}
    assert charts == {"gab-latency.json": "customSmallerIsBetter",
                      "gab-bandwidth.json": "customBiggerIsBetter"}


def test_workflow_commands_parse():
    """Each commscope command, its variables given the workflow's values, is accepted by
    commscope's own parser with nothing left over."""
    flow = workflow()
    found = []
    for step in steps(flow):
        for line in commands(step.get("run", "")):
            if not line.startswith("commscope "):
                continue
            line = VARIABLE.sub(lambda m: flow["env"].get(m.group(1), "1"), line)
            argv = shlex.split(line.partition(" > ")[0])[1:]
            top = parser(argv[0])
            args, extra = top.parse_known_args(argv)
            assert not extra, (line, extra)
            found.append(args.verb)
    assert found == ["info", "run", "compare", "results", "results"]


def run_steps(flow: dict, env: dict, cwd: Path) -> int:
    """The workflow's shell steps in order, as GitHub runs them (`bash -e`, the GITHUB_ENV
    file read between steps), the install step left out (commscope is installed
    here), until one fails; the step `gate` may exit 1 (a regression or, with --fail-on
    undetermined, a case it could not tell). Its exit code."""
    github_env = cwd / "github_env"
    for step in steps(flow):
        if "run" not in step or step["run"].startswith("python -m pip"):
            continue
        github_env.write_text("")
        done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=cwd,
                              env={**env, "GITHUB_ENV": str(github_env)},
                              capture_output=True, text=True, timeout=600)
        env.update(line.split("=", 1) for line in github_env.read_text().splitlines())
        if step.get("id") == "gate" and done.returncode == 1:
            return 1
        assert done.returncode == 0, (step["name"], done.stdout, done.stderr)
    return 0


@pytest.mark.mpi
def test_workflow_steps_run(tmp_path):
    """Twice in one directory, as the cache would keep it: the first run becomes the
    baseline, the second is compared with it. Open MPI alone: the steps' shell and the
    files they pass on are the same whichever library measured."""
    mpi_prefix = EMBEDDED
    flow = workflow()
    small = {"SIZES": "8,1KiB", "LAUNCHES": "3"}
    assert set(small) <= set(flow["env"])
    env = {**os.environ, **flow["env"], **small, "COMMSCOPE_MPI": str(mpi_prefix),
           "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "TMPDIR": str(tmp_path)}

    assert run_steps(flow, env, tmp_path) == 0
    assert (tmp_path / "baseline.txt").read_text() == "1\n"
    assert not (tmp_path / "compare.xml").exists()
    for measure, unit in (("latency", "us"), ("bandwidth", "MB/s")):
        chart = json.loads((tmp_path / f"gab-{measure}.json").read_text())
        assert len(chart) == 2 and {entry["unit"] for entry in chart} == {unit}

    code = run_steps(flow, env, tmp_path)
    read = JUnitXml.fromfile(str(tmp_path / "compare.xml"))
    tests = [case for suite in ([read] if isinstance(read, TestSuite) else read)
             for case in suite]
    assert len(tests) == 2  # 8 B and 1 KiB
    # --fail-on undetermined: a case the launches could not tell is a failure, as a
    # regression is, and exit 1
    failed = [case for case in tests if any(isinstance(r, Failure) for r in case.result)]
    if code == 0:  # every case decided, none a regression: run 2 is the new baseline
        assert not failed
        assert (tmp_path / "baseline.txt").read_text() == "2\n"
    else:  # a case undetermined, or a false alarm (as rare as docs/compare.md measures)
        assert failed and all(r.type in ("regression", "undetermined", "inconclusive")
                              for case in failed for r in case.result)
        assert (tmp_path / "baseline.txt").read_text() == "1\n"
