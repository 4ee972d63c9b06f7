/* Point-to-point calls for 64-bit message sizes. With MPI-4 large counts
 * (MPI_VERSION >= 4) every call is the `_c` variant with MPI_BYTE; on MPI-3 a
 * message over INT_MAX bytes is one element of a derived datatype instead
 * (docs/native.md, "Kernels"). Kernels never choose between the two. */
#ifndef COMMSCOPE_MSG_H
#define COMMSCOPE_MSG_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#if MPI_VERSION >= 4
#define MSG_LARGE_COUNT 1
typedef MPI_Count msg_count;
#else
#define MSG_LARGE_COUNT 0
typedef int msg_count;
#endif

/* pingpong's send modes (docs/native.md); the names are the --modes values. */
enum send_mode {
    SEND_STANDARD,
    SEND_SYNCHRONOUS,
    SEND_BUFFERED,
    SEND_READY,
    SEND_NONBLOCKING,
    SEND_SENDRECV,
    SEND_MODE_COUNT
};
#define SEND_MODE_BIT(mode) (1u << (mode))
extern const char *const send_mode_names[SEND_MODE_COUNT];

/* n bytes as (count, datatype). Over INT_MAX bytes, blocks is the same n
 * bytes as one element of a derived datatype: the whole message on MPI-3,
 * and on MPI-4 still what buffered sends use (see msg_send). Otherwise
 * blocks is MPI_DATATYPE_NULL. */
struct msg_type {
    msg_count count;
    MPI_Datatype type;
    MPI_Datatype blocks;
    bool owned; /* type is derived and freed with the message */
};
struct msg_type msg_type_create(size_t bytes);
/* n bytes of elements of `element` (element_bytes each), up to INT_MAX
 * bytes; with block > 0, in blocks of `block` elements whose starts are
 * `stride` elements apart (MPI_Type_vector), as one element of that type. */
struct msg_type msg_type_layout(size_t bytes, MPI_Datatype element, size_t element_bytes,
                                int block, int stride);
void msg_type_free(struct msg_type *t);

/* Blocking send in MPI send mode standard, synchronous, buffered or ready. */
void msg_send(enum send_mode mode, const void *buf, const struct msg_type *t, int dest, int tag,
              MPI_Comm comm);
/* Persistent requests (MPI_Send_init and its modes, MPI_Recv_init): made
 * once, then MPI_Start and MPI_Wait each iteration. */
void msg_send_init(enum send_mode mode, const void *buf, const struct msg_type *t, int dest,
                   int tag, MPI_Comm comm, MPI_Request *req);
void msg_recv_init(void *buf, const struct msg_type *t, int source, int tag, MPI_Comm comm,
                   MPI_Request *req);
void msg_isend(const void *buf, const struct msg_type *t, int dest, int tag, MPI_Comm comm,
               MPI_Request *req);
void msg_recv(void *buf, const struct msg_type *t, int source, int tag, MPI_Comm comm);
void msg_irecv(void *buf, const struct msg_type *t, int source, int tag, MPI_Comm comm,
               MPI_Request *req);
void msg_sendrecv(const void *sendbuf, int dest, int sendtag, void *recvbuf, int source,
                  int recvtag, const struct msg_type *t, MPI_Comm comm);

/* Buffered mode: whether one message of n bytes fits an attachable buffer
 * (MPI-3 MPI_Buffer_attach takes an int size), and attach/detach of this
 * process's buffer, sized for exactly one pending message. */
bool msg_bsend_fits(size_t bytes);
void msg_buffer_attach(const struct msg_type *t, MPI_Comm comm);
void msg_buffer_detach(void);

#endif
