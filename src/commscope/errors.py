"""Errors a user can cause, and how the CLI shows them."""


class UserError(Exception):
    """A mistake the user can fix; the CLI prints its one-line message and exits 2."""
