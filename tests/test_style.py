"""The house style, checked by the formatters and linters the `test` extra installs.

Each tool runs from the venv's bin (beside sys.executable), at the version pyproject.toml
pins, so a check reads the same on every machine; one test per tool. The C core is checked
by clang-format against native/.clang-format, which writes down the style the code has.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NATIVE = ROOT / "native"
CLANG_FORMAT_STYLE = NATIVE / ".clang-format"


def venv_tool(name: str) -> Path:
    """A tool the `test` extra installs, from this venv's bin."""
    tool = Path(sys.executable).parent / name
    assert tool.is_file(), f"{tool} is missing: pip install -e '.[test]'"
    return tool


def clang_format_check(*files: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    """clang-format's check of `files` (or of `stdin`, as a C file) in native/'s style,
    changing nothing: exit 1 and a `FILE:LINE:COL: error:` line wherever it would."""
    command = [str(venv_tool("clang-format")), f"--style=file:{CLANG_FORMAT_STYLE}",
               "--dry-run", "--Werror"]
    if stdin is not None:
        command.append("--assume-filename=check.c")
    return subprocess.run(command + [str(f) for f in files], input=stdin, check=False,
                          capture_output=True, text=True, timeout=120)


# --- Python: ruff over the package, the tests and the benches ---

def test_python_sources_pass_ruff():
    done = subprocess.run([str(venv_tool("ruff")), "check", "--no-cache", "src", "tests",
                           "bench"], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]


def test_ruff_reads_the_house_configuration():
    """A line of 99 columns passes and one of 100 fails: ruff reads pyproject.toml's
    [tool.ruff], not its own default of 88."""
    def check(columns: int) -> int:
        line = "x = " + repr("y" * (columns - 6)) + "\n"
        return subprocess.run([str(venv_tool("ruff")), "check", "--no-cache", "--stdin-filename",
                               "src/commscope/probe_line.py", "-"], input=line, cwd=ROOT,
                              capture_output=True, text=True, timeout=60).returncode
    assert (check(99), check(100)) == (0, 1)


# --- C: clang-format over native/ ---

def test_native_sources_are_clang_formatted():
    sources = sorted(p for p in NATIVE.rglob("*") if p.suffix in (".c", ".h"))
    assert NATIVE / "main.c" in sources, f"no C sources under {NATIVE}"
    done = clang_format_check(*sources)
    differ = sorted({Path(m).relative_to(ROOT).as_posix() for m in
                     re.findall(r"^(.+?):\d+:\d+: error:", done.stderr, re.MULTILINE)})
    assert done.returncode == 0 and not differ, (
        f"not in native/.clang-format's style: {', '.join(differ) or done.stderr}; "
        f"run {venv_tool('clang-format')} -i on them")


def sum_over(columns: int) -> str:
    """A function whose one statement, a long sum, is `columns` columns wide."""
    head = "    total = " + "term + " * 12
    return "void add(void)\n{\n%s;\n}\n" % (head + "t" * (columns - len(head) - 1))


def test_the_check_applies_native_style():
    """A statement of 99 columns passes and one of 100 fails: the check reads
    native/.clang-format, not LLVM's own style (80 columns, two-space indents)."""
    assert clang_format_check(stdin=sum_over(99)).returncode == 0
    assert clang_format_check(stdin=sum_over(100)).returncode == 1
