/* The MPI calls the profile counts (profile.h), each timed around its PMPI_*
 * twin. A nonblocking call's row also receives its share of the Wait or Test
 * that completes it: what an Isend/Irecv/Waitall exchange costs shows in the
 * rows of its messages, not in one MPI_Waitall row of no size. */
#include <stdlib.h>

#include "profile.h"

#define TIMED(call_id, comm, bytes, peer, pmpi)                                    \
    do {                                                                           \
        uint64_t start_ = profile_ticks();                                         \
        int rc_ = pmpi;                                                            \
        profile_call(call_id, comm, bytes, peer, start_);                          \
        return rc_;                                                                \
    } while (0)

#define STARTED(call_id, comm, bytes, peer, receive, request, pmpi)                \
    do {                                                                           \
        uint64_t start_ = profile_ticks();                                         \
        int rc_ = pmpi;                                                            \
        profile_request(*(request), profile_call(call_id, comm, bytes, peer, start_), \
                        receive);                                                  \
        return rc_;                                                                \
    } while (0)

/* --- the program's start and end --- */

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    profile_begin();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    profile_begin();
    return rc;
}

int MPI_Finalize(void)
{
    profile_end();
    return PMPI_Finalize();
}

int MPI_Abort(MPI_Comm comm, int code)
{
    profile_abort();
    return PMPI_Abort(comm, code);
}

int MPI_Comm_free(MPI_Comm *comm)
{
    profile_forget(*comm);
    return PMPI_Comm_free(comm);
}

/* --- point-to-point: bytes the message, peer the partner --- */

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    TIMED(CALL_SEND, comm, profile_bytes(count, type), dest,
          PMPI_Send(buf, count, type, dest, tag, comm));
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    TIMED(CALL_SSEND, comm, profile_bytes(count, type), dest,
          PMPI_Ssend(buf, count, type, dest, tag, comm));
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    TIMED(CALL_BSEND, comm, profile_bytes(count, type), dest,
          PMPI_Bsend(buf, count, type, dest, tag, comm));
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    TIMED(CALL_RSEND, comm, profile_bytes(count, type), dest,
          PMPI_Rsend(buf, count, type, dest, tag, comm));
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    TIMED(CALL_RECV, comm, profile_bytes(count, type), source,
          PMPI_Recv(buf, count, type, source, tag, comm, status));
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                 int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm,
                 MPI_Status *status)
{
    TIMED(CALL_SENDRECV, comm, profile_bytes(scount, stype), dest,
          PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm,
                        status));
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int stag, int source,
                         int rtag, MPI_Comm comm, MPI_Status *status)
{
    TIMED(CALL_SENDRECV_REPLACE, comm, profile_bytes(count, type), dest,
          PMPI_Sendrecv_replace(buf, count, type, dest, stag, source, rtag, comm, status));
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    TIMED(CALL_PROBE, comm, 0, source, PMPI_Probe(source, tag, comm, status));
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    STARTED(CALL_ISEND, comm, profile_bytes(count, type), dest, 0, request,
            PMPI_Isend(buf, count, type, dest, tag, comm, request));
}

int MPI_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    STARTED(CALL_ISSEND, comm, profile_bytes(count, type), dest, 0, request,
            PMPI_Issend(buf, count, type, dest, tag, comm, request));
}

int MPI_Ibsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    STARTED(CALL_IBSEND, comm, profile_bytes(count, type), dest, 0, request,
            PMPI_Ibsend(buf, count, type, dest, tag, comm, request));
}

int MPI_Irsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    STARTED(CALL_IRSEND, comm, profile_bytes(count, type), dest, 0, request,
            PMPI_Irsend(buf, count, type, dest, tag, comm, request));
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    STARTED(CALL_IRECV, comm, profile_bytes(count, type), source, 1, request,
            PMPI_Irecv(buf, count, type, source, tag, comm, request));
}

/* --- persistent requests: counted at each start, as the nonblocking call of their mode --- */

#define PERSISTENT(call_id, bytes, peer, receive, pmpi)                                \
    do {                                                                           \
        int rc_ = pmpi;                                                            \
        profile_persistent(*request, call_id, comm, bytes, peer, receive);         \
        return rc_;                                                                \
    } while (0)

/* the four send modes' init calls, alike but for their names */
#define SEND_INIT(mode, call_id)                                                           \
    int MPI_##mode##_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, \
                          MPI_Comm comm, MPI_Request *request)                             \
    {                                                                                      \
        PERSISTENT(call_id, profile_bytes(count, type), dest, 0,                           \
                   PMPI_##mode##_init(buf, count, type, dest, tag, comm, request));        \
    }

SEND_INIT(Send, CALL_SEND_INIT)
SEND_INIT(Ssend, CALL_SSEND_INIT)
SEND_INIT(Bsend, CALL_BSEND_INIT)
SEND_INIT(Rsend, CALL_RSEND_INIT)

int MPI_Recv_init(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                  MPI_Request *request)
{
    PERSISTENT(CALL_RECV_INIT, profile_bytes(count, type), source, 1,
               PMPI_Recv_init(buf, count, type, source, tag, comm, request));
}

int MPI_Start(MPI_Request *request)
{
    uint64_t start = profile_ticks();
    int rc = PMPI_Start(request);
    profile_start(1, request, start);
    return rc;
}

int MPI_Startall(int count, MPI_Request requests[])
{
    uint64_t start = profile_ticks();
    int rc = PMPI_Startall(count, requests);
    profile_start(count, requests, start);
    return rc;
}

/* --- completion: the handles read before the call, which sets them to NULL --- */

#define COMPLETION(call_id, n, requests, pmpi, done_expr)                          \
    do {                                                                           \
        MPI_Request few_[64],                                                      \
            *before_ = (n) <= 64 ? few_ : malloc((size_t)(n) * sizeof *before_);   \
        int fewd_[64], *done_ = (n) <= 64 ? fewd_ : calloc((size_t)(n), sizeof *done_); \
        for (int i_ = 0; i_ < (n); i_++) {                                         \
            before_[i_] = (requests)[i_];                                          \
            done_[i_] = 0;                                                         \
        }                                                                          \
        uint64_t start_ = profile_ticks();                                         \
        int rc_ = pmpi;                                                            \
        done_expr;                                                                 \
        profile_completion(call_id, n, before_, done_, start_);                    \
        if (before_ != few_) {                                                     \
            free(before_);                                                         \
            free(done_);                                                           \
        }                                                                          \
        return rc_;                                                                \
    } while (0)

#define ALL_DONE for (int j_ = 0; j_ < count; j_++) done_[j_] = 1
#define ALL_IF(flag) for (int j_ = 0; j_ < count; j_++) done_[j_] = *(flag)
#define ONE_DONE(index) if (*(index) != MPI_UNDEFINED) done_[*(index)] = 1
#define ONE_IF(flag, index) if (*(flag) && *(index) != MPI_UNDEFINED) done_[*(index)] = 1
#define SOME_DONE(outcount, indices)                                                        \
    if (*(outcount) != MPI_UNDEFINED)                                                       \
        for (int j_ = 0; j_ < *(outcount); j_++) done_[(indices)[j_]] = 1

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    int count = 1;
    COMPLETION(CALL_WAIT, 1, request, PMPI_Wait(request, status), ALL_DONE);
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    COMPLETION(CALL_WAITALL, count, requests, PMPI_Waitall(count, requests, statuses), ALL_DONE);
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    COMPLETION(CALL_WAITANY, count, requests, PMPI_Waitany(count, requests, index, status),
               ONE_DONE(index));
}

int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    COMPLETION(CALL_WAITSOME, incount, requests,
               PMPI_Waitsome(incount, requests, outcount, indices, statuses),
               SOME_DONE(outcount, indices));
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    int count = 1;
    COMPLETION(CALL_TEST, 1, request, PMPI_Test(request, flag, status), ALL_IF(flag));
}

int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    COMPLETION(CALL_TESTALL, count, requests, PMPI_Testall(count, requests, flag, statuses),
               ALL_IF(flag));
}

int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    COMPLETION(CALL_TESTANY, count, requests, PMPI_Testany(count, requests, index, flag, status),
               ONE_IF(flag, index));
}

int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    COMPLETION(CALL_TESTSOME, incount, requests,
               PMPI_Testsome(incount, requests, outcount, indices, statuses),
               SOME_DONE(outcount, indices));
}

int MPI_Request_free(MPI_Request *request)
{
    profile_drop(*request);
    return PMPI_Request_free(request);
}
