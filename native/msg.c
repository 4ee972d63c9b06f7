#include "msg.h"

#include <limits.h>

#include "buffer.h"
#include "check.h"

/* LC(MPI_Send) is MPI_Send_c with large counts, MPI_Send without. */
#if MSG_LARGE_COUNT
#define LC(fn) fn##_c
#else
#define LC(fn) fn
#endif

const char *const send_mode_names[SEND_MODE_COUNT] = {
    [SEND_STANDARD] = "standard", [SEND_SYNCHRONOUS] = "synchronous", [SEND_BUFFERED] = "buffered",
    [SEND_READY] = "ready",       [SEND_NONBLOCKING] = "nonblocking", [SEND_SENDRECV] = "sendrecv",
};

#define MSG_BLOCK ((size_t)1 << 20)

/* 1 MiB contiguous blocks plus the remainder, joined in one struct type:
 * a message of any size as count 1. */
static MPI_Datatype block_type(size_t bytes)
{
    size_t blocks = bytes / MSG_BLOCK, rest = bytes % MSG_BLOCK;
    if (blocks > INT_MAX)
        die("message of %zu bytes is too large for a derived datatype", bytes);
    MPI_Datatype block, body, whole;
    CHECK_MPI(MPI_Type_contiguous((int)MSG_BLOCK, MPI_BYTE, &block));
    CHECK_MPI(MPI_Type_contiguous((int)blocks, block, &body));
    int lengths[2] = {1, (int)rest};
    MPI_Aint displacements[2] = {0, (MPI_Aint)(blocks * MSG_BLOCK)};
    MPI_Datatype types[2] = {body, MPI_BYTE};
    CHECK_MPI(MPI_Type_create_struct(rest ? 2 : 1, lengths, displacements, types, &whole));
    CHECK_MPI(MPI_Type_commit(&whole));
    CHECK_MPI(MPI_Type_free(&body));
    CHECK_MPI(MPI_Type_free(&block));
    return whole;
}

struct msg_type msg_type_create(size_t bytes)
{
    if (bytes <= INT_MAX)
        return (struct msg_type){(msg_count)bytes, MPI_BYTE, MPI_DATATYPE_NULL, false};
    MPI_Datatype blocks = block_type(bytes);
    if (MSG_LARGE_COUNT)
        return (struct msg_type){(msg_count)bytes, MPI_BYTE, blocks, false};
    return (struct msg_type){1, blocks, blocks, false};
}

struct msg_type msg_type_layout(size_t bytes, MPI_Datatype element, size_t element_bytes,
                                int block, int stride)
{
    int count = (int)(bytes / element_bytes);
    if (block == 0 || count == 0)
        return (struct msg_type){count, element, MPI_DATATYPE_NULL, false};
    MPI_Datatype vector;
    CHECK_MPI(MPI_Type_vector(count / block, block, stride, element, &vector));
    CHECK_MPI(MPI_Type_commit(&vector));
    return (struct msg_type){1, vector, MPI_DATATYPE_NULL, true};
}

void msg_type_free(struct msg_type *t)
{
    if (t->owned)
        CHECK_MPI(MPI_Type_free(&t->type));
    if (t->blocks != MPI_DATATYPE_NULL)
        CHECK_MPI(MPI_Type_free(&t->blocks));
}

void msg_send(enum send_mode mode, const void *buf, const struct msg_type *t, int dest, int tag,
              MPI_Comm comm)
{
    switch (mode) {
    case SEND_SYNCHRONOUS:
        CHECK_MPI(LC(MPI_Ssend)(buf, t->count, t->type, dest, tag, comm));
        break;
    case SEND_BUFFERED:
        /* MPICH (5.0.2) passes MPI_Bsend_c's count on as an int
         * (MPIR_Bsend_isend), so over INT_MAX bytes even MPI-4 sends one
         * element of the block type; the receiver's MPI_BYTE count matches
         * its type signature. */
        if (t->blocks != MPI_DATATYPE_NULL)
            CHECK_MPI(MPI_Bsend(buf, 1, t->blocks, dest, tag, comm));
        else
            CHECK_MPI(LC(MPI_Bsend)(buf, t->count, t->type, dest, tag, comm));
        break;
    case SEND_READY:
        CHECK_MPI(LC(MPI_Rsend)(buf, t->count, t->type, dest, tag, comm));
        break;
    case SEND_STANDARD:
        CHECK_MPI(LC(MPI_Send)(buf, t->count, t->type, dest, tag, comm));
        break;
    default:
        die("msg_send: %s is not an MPI send mode", send_mode_names[mode]);
    }
}

void msg_send_init(enum send_mode mode, const void *buf, const struct msg_type *t, int dest,
                   int tag, MPI_Comm comm, MPI_Request *req)
{
    switch (mode) {
    case SEND_SYNCHRONOUS:
        CHECK_MPI(LC(MPI_Ssend_init)(buf, t->count, t->type, dest, tag, comm, req));
        break;
    case SEND_BUFFERED: /* over INT_MAX bytes: one block element, as msg_send */
        if (t->blocks != MPI_DATATYPE_NULL)
            CHECK_MPI(MPI_Bsend_init(buf, 1, t->blocks, dest, tag, comm, req));
        else
            CHECK_MPI(LC(MPI_Bsend_init)(buf, t->count, t->type, dest, tag, comm, req));
        break;
    case SEND_READY:
        CHECK_MPI(LC(MPI_Rsend_init)(buf, t->count, t->type, dest, tag, comm, req));
        break;
    case SEND_STANDARD:
        CHECK_MPI(LC(MPI_Send_init)(buf, t->count, t->type, dest, tag, comm, req));
        break;
    default:
        die("msg_send_init: %s has no persistent form", send_mode_names[mode]);
    }
}

void msg_recv_init(void *buf, const struct msg_type *t, int source, int tag, MPI_Comm comm,
                   MPI_Request *req)
{
    CHECK_MPI(LC(MPI_Recv_init)(buf, t->count, t->type, source, tag, comm, req));
}

void msg_isend(const void *buf, const struct msg_type *t, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    CHECK_MPI(LC(MPI_Isend)(buf, t->count, t->type, dest, tag, comm, req));
}

void msg_recv(void *buf, const struct msg_type *t, int source, int tag, MPI_Comm comm)
{
    CHECK_MPI(LC(MPI_Recv)(buf, t->count, t->type, source, tag, comm, MPI_STATUS_IGNORE));
}

void msg_irecv(void *buf, const struct msg_type *t, int source, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    CHECK_MPI(LC(MPI_Irecv)(buf, t->count, t->type, source, tag, comm, req));
}

void msg_sendrecv(const void *sendbuf, int dest, int sendtag, void *recvbuf, int source,
                  int recvtag, const struct msg_type *t, MPI_Comm comm)
{
    CHECK_MPI(LC(MPI_Sendrecv)(sendbuf, t->count, t->type, dest, sendtag, recvbuf, t->count,
                               t->type, source, recvtag, comm, MPI_STATUS_IGNORE));
}

bool msg_bsend_fits(size_t bytes)
{
    return MSG_LARGE_COUNT || bytes <= (size_t)INT_MAX - MPI_BSEND_OVERHEAD;
}

/* The packed size of the message plus MPI_BSEND_OVERHEAD is what the MPI
 * standard (3.6.1) requires per pending buffered send; for n bytes the
 * packed size is n. */
void msg_buffer_attach(const struct msg_type *t, MPI_Comm comm)
{
    msg_count packed;
    if (t->blocks != MPI_DATATYPE_NULL)
        CHECK_MPI(LC(MPI_Pack_size)(1, t->blocks, comm, &packed));
    else
        CHECK_MPI(LC(MPI_Pack_size)(t->count, t->type, comm, &packed));
    msg_count size = packed + MPI_BSEND_OVERHEAD;
    void *buffer = buffer_alloc((size_t)size);
    CHECK_MPI(LC(MPI_Buffer_attach)(buffer, size));
}

void msg_buffer_detach(void)
{
    void *buffer;
    msg_count size;
    /* Detach blocks until every buffered message has been delivered. */
    CHECK_MPI(LC(MPI_Buffer_detach)(&buffer, &size));
    buffer_free(buffer);
}
