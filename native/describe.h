/* commscope-native --describe: the kernels as data (docs/native.md,
 * "Describe"), the one source of what a kernel is that Python reads. */
#ifndef COMMSCOPE_DESCRIBE_H
#define COMMSCOPE_DESCRIBE_H

/* Writes one JSON object to stdout. Needs no MPI_Init. */
void describe_write(void);

#endif
