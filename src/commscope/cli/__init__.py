"""The `commscope` command: one module per verb, each a thin layer over the library."""

from __future__ import annotations

import argparse
import importlib
import sqlite3
import sys

from .. import __version__, stopping
from ..build import BuildError
from ..errors import UserError

# One module each; imported when the parser is built, so that importing this package
# costs nothing and main holds stop signals while they load (numpy, scipy: ~1 s).
VERBS = ("run", "sweep", "app", "study", "info", "results", "compare", "fit", "predict",
         "report", "imports", "probe")


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is a UserError: one line, exit 2; `more_help`, when
    set, adds text to --help that is only worked out when asked for."""

    more_help = None

    def error(self, message: str):
        verb = self.prog.partition(" ")[2]
        raise UserError(f"{verb}: {message}" if verb else message)

    def format_help(self) -> str:
        text = super().format_help()
        return text + "\n" + self.more_help() + "\n" if self.more_help else text


def parser() -> argparse.ArgumentParser:
    top = _Parser(prog="commscope", description="MPI communication benchmark")
    top.add_argument("--version", action="version", version=f"commscope {__version__}")
    sub = top.add_subparsers(dest="verb", metavar="VERB", required=True, parser_class=_Parser)
    for verb in VERBS:
        importlib.import_module(f".{verb}", __name__).add_parser(sub)
    return top


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    stopping.install()
    stopping.hold()  # a stop signal while the verbs load is raised once they have
    args = None
    try:
        top = parser()
        stopping.release()
        # Kernel parameters are flags too (run --op sum), known only from the native
        # binary's description: the verbs that take them read the rest themselves.
        args, extra = top.parse_known_args(argv)
        if extra and not getattr(args, "kernel_flags", False):
            top.error(f"unrecognized arguments: {' '.join(extra)}")
        args.extra = extra
        return args.func(args, argv)
    except UserError as exc:
        print(f"commscope: {exc}", file=sys.stderr)
        return 2
    except BuildError as exc:
        print(f"commscope: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:  # stopped outside a launch; a launch stopped says so itself
        db = getattr(args, "db", None)
        kept = f"; everything measured is kept in {db}" if db else ""
        print(f"commscope: stopped by {stopping.name()}{kept}", file=sys.stderr)
        return stopping.exit_code()
    except sqlite3.Error as exc:  # after opening: a full disk, a file made read-only, ...
        print(f"commscope: {store_problem(getattr(args, 'db', None), exc)}",
              file=sys.stderr)
        return 1


def store_problem(db: str | None, exc: sqlite3.Error) -> str:
    """A results-file error as one line: what happened and what to do."""
    text = str(exc)
    if "full" in text:
        remedy = ("free space on its disk, then `--resume` a sweep or rerun; every case "
                  "stored before is kept")
    elif "readonly" in text or "read-only" in text:
        remedy = "make the file and its directory writable, or choose another --db path"
    elif "malformed" in text or "not a database" in text:
        remedy = ("the file is damaged; `commscope results list` names the runs that still "
                  "read, and a new --db path takes new runs")
    elif "locked" in text or "busy" in text:
        remedy = "another command held it too long; run again when it is done"
    else:
        remedy = "check the file and its disk, or choose another --db path"
    return f"--db {db or 'file'}: results file error ({text}); {remedy}"
