/* The kernel table: one line per kernel, defined in kernels/NAME.c as
 * `const struct kernel kernel_NAME`. Order is the --help listing order. */
KERNEL(pingpong)
KERNEL(pingping)
KERNEL(bw)
KERNEL(bibw)
