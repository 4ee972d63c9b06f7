"""The `commscope` command: one module per verb, each a thin layer over the library."""

from __future__ import annotations

import argparse
import importlib
import re
import sqlite3
import sys

from .. import __version__
from ..system import stopping
from ..system.errors import BuildError, UserError

# Each verb: its module and its one line in `commscope --help`. Only the module of the
# verb given is imported (numpy, scipy and the rest load with it): `--help` and a
# mistyped verb cost no more than Python itself.
VERBS = {
    "run": ("run", "measure one kernel"),
    "sweep": ("sweep", "run a TOML plan of kernels x sizes x processes x placements x "
                       "transports"),
    "app": ("app", "run a verified application"),
    "study": ("study", "reproduce a seed report's experiment in one command"),
    "info": ("info", "show the MPI, native binary and timer in use"),
    "results": ("results", "list, show and export stored runs"),
    "compare": ("compare", "which cases got faster or slower between runs"),
    "check": ("check", "judge the MPI library by its own performance guidelines"),
    "health": ("health", "find the bad node or link: every pair of nodes, a drain list"),
    "congestion": ("congestion", "what aggressor traffic costs canaries on a shared path"),
    "tune": ("tune", "choose each collective's algorithm by measuring the library's own; "
                     "write its rules file"),
    "fit": ("fit", "fit latency and bandwidth models to stored runs"),
    "predict": ("predict", "predict ring and collective times from a fitted run, or a "
                           "profiled program's communication"),
    "profile": ("profile", "run an MPI program under a profiler: its calls, sizes and time"),
    "report": ("report", "write an HTML report with plots of stored runs"),
    "import": ("imports", "store OSU, IMB or nccl-tests output, or an mpisee or mpiP "
                          "profile, as runs"),
    "probe": ("probe", "find where the MPI changes protocol"),
    "watch": ("watch", "measure a plan's cases again and again into one results file: "
                       "every --every, or --once from cron"),
}


# argparse expands each option's help with %: a bare "5%" in it crashes --help. Help
# strings are written as they read; this is the one place a lone % is doubled (a
# "%(default)s" and an already doubled "%%" are left as they are).
_PERCENT = re.compile(r"%%|%\(|%")


def _escaping(formatter: type[argparse.HelpFormatter]) -> type[argparse.HelpFormatter]:
    class Escaping(formatter):
        def _get_help_string(self, action):
            return _PERCENT.sub(lambda m: m[0] if len(m[0]) == 2 else "%%",
                                super()._get_help_string(action))
    return Escaping


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is a UserError: one line, exit 2; `more_help`, when
    set, adds text to --help that is only worked out when asked for."""

    more_help = None

    def __init__(self, *args, **kwargs):
        kwargs["formatter_class"] = _escaping(kwargs.get("formatter_class",
                                                         argparse.HelpFormatter))
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        verb = self.prog.partition(" ")[2]
        raise UserError(f"{verb}: {message}" if verb else message)

    def format_help(self) -> str:
        text = super().format_help()
        return text + "\n" + self.more_help() + "\n" if self.more_help else text


def parser(verb: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser, with `verb`'s own options (every verb's, when None)."""
    top = _Parser(prog="commscope", description="MPI communication benchmark")
    top.add_argument("--version", action="version", version=f"commscope {__version__}")
    sub = top.add_subparsers(dest="verb", metavar="VERB", required=True, parser_class=_Parser)
    for name, (module, summary) in VERBS.items():
        if verb in (None, name):
            importlib.import_module(f".{module}", __name__).add_parser(sub, summary)
        else:
            sub.add_parser(name, help=summary, add_help=False)
    return top


def _verb(argv: list[str]) -> str:
    """The verb argv names (the first word not an option), or "" when none is known."""
    given = next((a for a in argv if not a.startswith("-")), "")
    return given if given in VERBS else ""


def main(argv: list[str] | None = None) -> int:
    """The command line `argv` (sys.argv's by default); its exit code. Callable in-process:
    the signal handlers are restored and nothing is left behind when it returns."""
    argv = sys.argv[1:] if argv is None else argv
    with stopping.installed():
        try:
            code = _main(argv)
        finally:
            _close_stores()
        if stopping.requested() and code == 0:
            code = stopping.exit_code()  # a stop that came too late to end anything
        return code


def _main(argv: list[str]) -> int:
    args = None
    try:
        top = parser(_verb(argv))
        stopping.check()
        # Kernel parameters are flags too (run --op sum), known only from the native
        # binary's description: the verbs that take them read the rest themselves.
        args, extra = top.parse_known_args(argv)
        if extra and not getattr(args, "kernel_flags", False):
            top.error(f"unrecognized arguments: {' '.join(extra)}")
        args.extra = extra
        from ..system.launcher.placement import oversubscribing  # after --help, which needs none
        with oversubscribing(getattr(args, "oversubscribe", False), argv):
            code = args.func(args, argv)
        stopping.check()
        return code
    except SystemExit as exc:  # --help and --version
        return exc.code if isinstance(exc.code, int) else 0
    except UserError as exc:
        print(f"commscope: {exc}", file=sys.stderr)
        return 2
    except BuildError as exc:
        if stopping.requested():  # Ctrl-C reaches the compiler too, which then fails
            return _stopped(args)
        print(f"commscope: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:  # stopped outside a launch; a launch stopped says so itself
        return _stopped(args)
    except Exception as exc:
        sqlite3 = sys.modules.get("sqlite3")  # loaded by whatever opened a results file
        if sqlite3 is None or not isinstance(exc, sqlite3.Error):
            raise
        # after opening: a full disk, a file made read-only, ...
        print(f"commscope: {store_problem(getattr(args, 'db', None), exc)}",
              file=sys.stderr)
        return 1


def _close_stores() -> None:
    store = sys.modules.get("commscope.store.store")  # a command that opened none never loads it
    if store:
        store.Store.close_all()


def _stopped(args) -> int:
    db = getattr(args, "db", None)
    kept = f"; everything measured is kept in {db}" if db else ""
    print(f"commscope: stopped by {stopping.name()}{kept}", file=sys.stderr)
    return stopping.exit_code()


def store_problem(db: str | None, exc: sqlite3.Error) -> str:
    """A results-file error as one line: what happened and what to do."""
    text = str(exc)
    if "full" in text:
        remedy = ("free space on its disk, then `--resume` a sweep or rerun; every case "
                  "stored before is kept")
    elif "readonly" in text or "read-only" in text:
        remedy = "make the file and its directory writable, or choose another --db path"
    elif "malformed" in text or "not a database" in text:
        remedy = ("the file is damaged; a new --db path takes new runs (a command on this "
                  "one names the runs that still read whole, and how to export them)")
    elif "locked" in text or "busy" in text:
        remedy = "another command held it too long; run again when it is done"
    else:
        remedy = "check the file and its disk, or choose another --db path"
    return f"--db {db or 'file'}: results file error ({text}); {remedy}"
