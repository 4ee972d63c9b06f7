"""The system measured on: the MPI library, the host, the native build and its kernels, the
launchers (mpirun, mpiexec, srun), and the units and sizes every layer speaks in."""
