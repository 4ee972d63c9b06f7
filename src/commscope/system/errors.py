"""Errors the CLI shows in one line: those a user can cause, and a build that fails."""


class UserError(Exception):
    """A mistake the user can fix; the CLI prints its one-line message and exits 2."""


class BuildError(Exception):
    """The native core did not compile: a defect in commscope or the MPI, not user input;
    the CLI prints it and exits 1."""
