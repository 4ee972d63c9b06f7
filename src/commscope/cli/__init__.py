"""The `commscope` command: one module per verb, each a thin layer over the library."""

from __future__ import annotations

import argparse
import sys

from .. import __version__
from ..build import BuildError
from ..errors import UserError
from . import app, compare, fit, info, predict, report, results, run, study, sweep

VERBS = (run, sweep, app, study, info, results, compare, fit, predict, report)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is a UserError: one line, exit 2."""

    def error(self, message: str):
        verb = self.prog.partition(" ")[2]
        raise UserError(f"{verb}: {message}" if verb else message)


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
        args = parser().parse_args(argv)
        return args.func(args, argv)
    except UserError as exc:
        print(f"commscope: {exc}", file=sys.stderr)
        return 2
    except BuildError as exc:
        print(f"commscope: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 1
