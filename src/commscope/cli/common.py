"""Options shared by several verbs."""

from __future__ import annotations

import argparse
import json


def add_db(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", default="commscope.db", metavar="PATH",
                   help="results file (SQLite; default ./commscope.db)")


def add_mpi(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mpi", metavar="PREFIX",
                   help="MPI installation prefix (default: COMMSCOPE_MPI, $MPICC, mpicc on "
                        "PATH, then the embedded Open MPI)")


def print_json(value) -> None:
    print(json.dumps(value, indent=2))
