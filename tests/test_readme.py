"""Every command in README.md, run as the README gives it, so that the guide cannot go stale.

The test reads README.md itself. Its code blocks are of three kinds: ```sh holds commands,
one a line, each run here; ```toml holds a file the commands read, named on its first line
(`# plan.toml`); ```text holds output, which is not run. Each `## ` section runs in a
directory of its own, its commands in order against one results file there
(./commscope.db, as the README's commands name none), so a section's run numbers are the
ones it shows.

Every command runs in this process (`conftest.commscope`) on the fake MPI: the fake
prefix as COMMSCOPE_MPI (what `--mpi` would give), the in-process fake launcher, so the
fast tier runs them all in well under a minute. No command of the README needs real MPI:
what each shows (plans, sweeps, fits, verdicts, reports) is commscope's behaviour, which
the fake runs for real, and the MPI tier tests the same verbs on real MPI elsewhere.

`make demo` and `make test` are not run: they are the suite's own set-up (`make test` runs
this test). Commands after `make demo` need the runs it stores, so in its place the test
runs the commscope commands of the Makefile's `demo` recipe on the fake.

A command fails the test when it exits non-zero, unless its comment in the README says it
exits with that code (`# exits 1 on a regression`), or when a file it names with `-o`,
`--junit` or `--prom` is not written. A line in a ```sh block that is not a commscope
command or one of the two make targets fails the test too, as does a command outside a
```sh block, so nothing in the README is left unrun.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import commscope
from fakempi.inprocess import FakeLauncher
from commscope.cli import VERBS

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAKEFILE = ROOT / "Makefile"
COMMSCOPE = ".venv/bin/commscope"
WRITES = ("-o", "--output", "--junit", "--prom")  # flags whose value is a file or folder written
FENCE = re.compile(r"^```(\w*)\s*$")
COMMENT = re.compile(r"\s+#\s*(.*)$")
EXITS = re.compile(r"\bexits? (\d+)")
SHELL = {"&&", "||", "|", ";", ">", ">>", "<", "&"}


@dataclass
class Command:
    line: str  # as the README gives it
    argv: list[str]  # commscope's arguments; empty for a make target
    codes: set[int]  # exit codes the README says it gives
    make: str | None = None  # "demo" or "test"


@dataclass
class Section:
    title: str
    commands: list[Command] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # name: text, from ```toml blocks
    texts: list[str] = field(default_factory=list)  # ```text blocks: output shown


def command(line: str) -> Command:
    """One line of a ```sh block as the test runs it; a line it cannot run is an error."""
    comment = COMMENT.search(line)
    text = line[:comment.start()] if comment else line
    codes = {0} | {int(c) for c in EXITS.findall(comment.group(1))} if comment else {0}
    words = shlex.split(text)
    if SHELL & set(words) or any(w.startswith("$") for w in words):
        raise ValueError(f"README command {line!r}: shell syntax; give one command a line")
    if words[:1] == ["make"]:
        if words[1:] not in (["demo"], ["test"]):
            raise ValueError(f"README command {line!r}: only `make demo` and `make test`")
        return Command(line, [], codes, make=words[1])
    if words[:1] != [COMMSCOPE] or len(words) < 2 or words[1] not in VERBS:
        raise ValueError(f"README command {line!r}: not `{COMMSCOPE} VERB ...` "
                         f"with a verb of {sorted(VERBS)}")
    return Command(line, words[1:], codes)


def sections(text: str) -> list[Section]:
    """README.md's `## ` sections with their commands, files and outputs, in order."""
    found = [Section("(before the first section)")]
    kind, block = None, []
    for number, line in enumerate(text.splitlines(), 1):
        fence = FENCE.match(line)
        if kind is None and fence:
            kind, block = fence.group(1), []
            if kind not in ("sh", "toml", "text"):
                raise ValueError(f"README.md:{number}: a ```{kind} block; use sh (commands, "
                                 "each run by tests/test_readme.py), toml (a file) or text")
        elif kind is not None and line.startswith("```"):
            add(found[-1], kind, block)
            kind = None
        elif kind is not None:
            block.append(line)
        elif line.startswith("## "):
            found.append(Section(line[3:].strip()))
        elif re.match(rf"\s{{4,}}(make |{re.escape(COMMSCOPE)})", line) \
                or f"`{COMMSCOPE} " in line:
            raise ValueError(f"README.md:{number}: a command outside a ```sh block is "
                             f"not run by the test; put it in one: {line.strip()!r}")
    if kind is not None:
        raise ValueError("README.md: a code block is not closed")
    return found


def add(section: Section, kind: str, block: list[str]) -> None:
    if kind == "sh":
        section.commands += [command(line) for line in block
                             if line.strip() and not line.lstrip().startswith("#")]
    elif kind == "toml":
        name = re.fullmatch(r"#\s*(\S+)", block[0].strip()) if block else None
        if not name:
            raise ValueError(f"README.md: a ```toml block in {section.title!r} does not "
                             "name its file on its first line (# plan.toml)")
        section.files[name.group(1)] = "\n".join(block) + "\n"
    else:
        section.texts.append("\n".join(block))


try:  # a line the test cannot run fails one test below, not the suite's collection
    SECTIONS, UNREADABLE = sections(README.read_text()), None
except ValueError as error:
    SECTIONS, UNREADABLE = [], str(error)
RUN = [s for s in SECTIONS if s.commands]


def demo_recipe() -> list[list[str]]:
    """The commscope commands of the Makefile's `demo` recipe, in order."""
    lines = MAKEFILE.read_text().split("\ndemo:", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    recipe = [shlex.split(line) for line in lines if line.startswith("\t")]
    assert recipe and all(words[0] == "$(BIN)/commscope" for words in recipe), \
        f"make demo's recipe has a line this test cannot run on the fake: {recipe}"
    return [words[1:] for words in recipe]


def run(argv: list[str], where: Path, fake_mpi: Path):
    return commscope(*argv, cwd=where, launcher=FakeLauncher(),
                     env={**os.environ, "COMMSCOPE_MPI": str(fake_mpi)})


def written(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, word in enumerate(argv[:-1]) if word in WRITES]


@pytest.mark.parametrize("section", RUN, ids=[s.title for s in RUN])
def test_every_command_of_the_section_runs_as_the_readme_says(section, fake_mpi, tmp_path):
    for name, text in section.files.items():
        (tmp_path / name).write_text(text)
    for cmd in section.commands:
        if cmd.make == "demo":
            for argv in demo_recipe():
                done = run(argv, tmp_path, fake_mpi)
                assert done.returncode == 0, (f"make demo's `commscope {shlex.join(argv)}`",
                                              done.stderr)
            continue
        if cmd.make == "test":
            continue  # the suite's own set-up: it runs this test
        done = run(cmd.argv, tmp_path, fake_mpi)
        assert done.returncode in cmd.codes, \
            f"`{cmd.line}` exited {done.returncode}:\n{done.stderr}"
        for path in written(cmd.argv):
            assert (tmp_path / path).exists(), f"`{cmd.line}` did not write {path}"


def test_the_readme_is_a_short_guide_with_a_command_in_every_task():
    assert UNREADABLE is None, UNREADABLE
    assert len(README.read_text().splitlines()) <= 150
    titles = [s.title for s in RUN]
    for task in ("Characterise a cluster", "Gate CI", "Find a bad node or link",
                 "Tune the library", "Reproduce a seed study"):
        assert task in titles, (task, titles)
    makes = [c.make for s in SECTIONS for c in s.commands if c.make]
    assert makes == ["demo", "test"]


def test_the_demo_example_has_the_table_s_columns_and_legend_as_printed_now(fake_mpi,
                                                                           tmp_path):
    """The README's `make demo` output is from a real run; its table header and legend
    are what the table prints today (numbers differ on the fake)."""
    (shown,) = [t for s in SECTIONS for t in s.texts]
    printed = "".join(run(argv, tmp_path, fake_mpi).stdout for argv in demo_recipe()
                      if argv[0] == "run")
    header = next(line for line in shown.splitlines() if line.startswith("kernel "))
    assert header.split() == next(line for line in printed.splitlines()
                                  if line.startswith("kernel ")).split()
    legend = [line for line in shown.splitlines() if line.startswith(("time: ", "of ceiling"))]
    assert len(legend) == 2 and all(line in printed.splitlines() for line in legend), legend


@pytest.mark.parametrize("line, says", [
    ("ls -l", "not `.venv/bin/commscope VERB"),
    (".venv/bin/commscope nonesuch", "not `.venv/bin/commscope VERB"),
    ("commscope run pingpong", "not `.venv/bin/commscope VERB"),
    (".venv/bin/commscope run bw && .venv/bin/commscope fit", "shell syntax"),
    (".venv/bin/commscope run bw > out.txt", "shell syntax"),
    ("make clean", "only `make demo` and `make test`"),
])
def test_a_line_the_test_cannot_run_fails_it(line, says):
    with pytest.raises(ValueError, match=re.escape(says)):
        command(line)


def test_a_command_outside_a_sh_block_fails_it():
    with pytest.raises(ValueError, match="outside a ```sh block"):
        sections("## Task\n\n    .venv/bin/commscope run bw\n")
    with pytest.raises(ValueError, match="a ```bash block"):
        sections("## Task\n\n```bash\n.venv/bin/commscope run bw\n```\n")


def test_an_exit_code_counts_only_where_the_readme_gives_it():
    assert command(".venv/bin/commscope compare 1 2  # exits 1 on a regression").codes == {0, 1}
    assert command(".venv/bin/commscope compare 1 2  # baseline and new").codes == {0}
