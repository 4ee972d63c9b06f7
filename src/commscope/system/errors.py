"""Errors the CLI shows in one line: those a user can cause, and a build that fails."""

import shlex

DEFAULT_DB = "commscope.db"


class UserError(Exception):
    """A mistake the user can fix; the CLI prints its one-line message and exits 2."""


class BuildError(Exception):
    """The native core did not compile: a defect in commscope or the MPI, not user input;
    the CLI prints it and exits 1."""


def shell_line(*words, db=None) -> str:
    """A commscope command as the shell reads it (paths quoted), with the results file it
    reads where that is not the default, before a program's `--`."""
    words = [str(w) for w in words]
    at = words.index("--") if "--" in words else len(words)
    if db is not None and str(db) != DEFAULT_DB:
        words[at:at] = ["--db", str(db)]
    return shlex.join(["commscope", *words])


def to_run(*words, db=None) -> str:
    """A remedy to run, backticked: every backticked command a refusal prints runs as
    printed (tests/test_remedies.py runs each)."""
    return f"`{shell_line(*words, db=db)}`"
