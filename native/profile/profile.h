/* commscope's MPI profiling library (`commscope profile`, docs/profile.md):
 * preloaded into a program, it counts every point-to-point, collective and
 * one-sided call per rank by (call, communicator size, power-of-two size
 * bucket, peer on the same host or not) with the time spent in it, and writes
 * each rank's table to $COMMSCOPE_PROFILE_DIR/rank-R.json every second and
 * at MPI_Finalize, so that a program that dies keeps what it recorded.
 * Built apart from the native binary (build.py), with the program's mpicc. */
#ifndef COMMSCOPE_PROFILE_H
#define COMMSCOPE_PROFILE_H

#include <mpi.h>
#include <stdint.h>

#define PROFILE_CALLS(X)                                                                   \
    X(SEND, "MPI_Send") X(SSEND, "MPI_Ssend") X(BSEND, "MPI_Bsend") X(RSEND, "MPI_Rsend")  \
    X(RECV, "MPI_Recv") X(ISEND, "MPI_Isend") X(ISSEND, "MPI_Issend")                      \
    X(IBSEND, "MPI_Ibsend") X(IRSEND, "MPI_Irsend") X(IRECV, "MPI_Irecv")                  \
    X(SENDRECV, "MPI_Sendrecv") X(SENDRECV_REPLACE, "MPI_Sendrecv_replace")                \
    X(PROBE, "MPI_Probe") X(WAIT, "MPI_Wait") X(WAITALL, "MPI_Waitall")                     \
    X(WAITANY, "MPI_Waitany") X(WAITSOME, "MPI_Waitsome") X(TEST, "MPI_Test")              \
    X(TESTALL, "MPI_Testall") X(TESTANY, "MPI_Testany") X(TESTSOME, "MPI_Testsome")        \
    X(BARRIER, "MPI_Barrier") X(BCAST, "MPI_Bcast") X(REDUCE, "MPI_Reduce")                \
    X(ALLREDUCE, "MPI_Allreduce") X(GATHER, "MPI_Gather") X(GATHERV, "MPI_Gatherv")        \
    X(SCATTER, "MPI_Scatter") X(SCATTERV, "MPI_Scatterv") X(ALLGATHER, "MPI_Allgather")    \
    X(ALLGATHERV, "MPI_Allgatherv") X(ALLTOALL, "MPI_Alltoall")                            \
    X(ALLTOALLV, "MPI_Alltoallv") X(REDUCE_SCATTER, "MPI_Reduce_scatter")                  \
    X(REDUCE_SCATTER_BLOCK, "MPI_Reduce_scatter_block") X(SCAN, "MPI_Scan")                \
    X(EXSCAN, "MPI_Exscan") X(IBARRIER, "MPI_Ibarrier") X(IBCAST, "MPI_Ibcast")            \
    X(IREDUCE, "MPI_Ireduce") X(IALLREDUCE, "MPI_Iallreduce")                              \
    X(IALLGATHER, "MPI_Iallgather") X(IALLTOALL, "MPI_Ialltoall") X(PUT, "MPI_Put")        \
    X(GET, "MPI_Get") X(ACCUMULATE, "MPI_Accumulate") X(WIN_FENCE, "MPI_Win_fence")        \
    X(WIN_LOCK, "MPI_Win_lock") X(WIN_UNLOCK, "MPI_Win_unlock")                            \
    X(WIN_FLUSH, "MPI_Win_flush") X(SEND_INIT, "MPI_Send_init")                            \
    X(SSEND_INIT, "MPI_Ssend_init") X(BSEND_INIT, "MPI_Bsend_init")                        \
    X(RSEND_INIT, "MPI_Rsend_init") X(RECV_INIT, "MPI_Recv_init")

#define PROFILE_ENUM(id, name) CALL_##id,
enum profile_call { PROFILE_CALLS(PROFILE_ENUM) CALL_COUNT };
#undef PROFILE_ENUM

enum profile_peer { PEER_NONE, PEER_LOCAL, PEER_REMOTE };

/* The clock: ticks (the TSC where it is constant, else nanoseconds). */
uint64_t profile_ticks(void);

/* A call of `bytes` (count x type size) on `comm` took ticks since `start`;
 * `peer` is the rank in comm of a point-to-point partner (MPI_PROC_NULL,
 * MPI_ANY_SOURCE: none). The row's index, for a request to charge later. */
int profile_call(enum profile_call call, MPI_Comm comm, int64_t bytes, int peer, uint64_t start);
/* A one-sided call on `win`: its group's size for the communicator's. */
int profile_win_call(enum profile_call call, MPI_Win win, int64_t bytes, uint64_t start);
int64_t profile_bytes(int count, MPI_Datatype type);

/* A nonblocking call's request: its completion's time goes to its row, and so does the
 * time between its start's return and the call that completes it (its overlap). */
void profile_request(MPI_Request request, int row, int receive);
/* A Wait or Test of n requests (handles copied before the call) that took ticks
 * since `start`; done[i]: request i completed. Charged to the receives it
 * completed, else to its other requests, else to the call's own row. */
/* A request freed (MPI_Request_free) before it was seen complete. */
void profile_drop(MPI_Request request);
void profile_completion(enum profile_call call, int n, const MPI_Request *before, const int *done,
                        uint64_t start);

/* A persistent request made (MPI_*_init): its message is counted at each MPI_Start, in
 * the row of its init call, and completed as a nonblocking call's. */
void profile_persistent(MPI_Request request, enum profile_call call, MPI_Comm comm, int64_t bytes,
                        int peer, int receive);
/* MPI_Start or MPI_Startall of n requests that took ticks since `start`. */
void profile_start(int n, const MPI_Request *requests, uint64_t start);

void profile_begin(void);
/* MPI_Abort or a fatal signal: the table so far, unfinished. */
void profile_abort(void);
void profile_end(void);
void profile_forget(MPI_Comm comm);

#endif
