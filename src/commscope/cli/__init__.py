"""The `commscope` command: one module per verb, each a thin layer over the library."""

from __future__ import annotations

import argparse
import sys

from .. import __version__
from ..build import BuildError
from ..errors import UserError
from . import app, compare, fit, imports, info, predict, report, results, run, study, sweep

VERBS = (run, sweep, app, study, info, results, compare, fit, predict, report, imports)


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
        verb.add_parser(sub)
    return top


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        top = parser()
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
