"""commscope: MPI communication benchmark."""

__version__ = "0.1.0"
