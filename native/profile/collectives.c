/* The collective and one-sided calls the profile counts (profile.h). A
 * collective's bytes are what commscope's kernel of the same operation calls its
 * size (docs/kernels-collectives.md, OSU's convention): the buffer of bcast, the
 * vector of a reduction, one rank's block of the gathers, scatters and
 * all-to-alls, the block a rank receives of reduce_scatter; the v-forms the mean
 * of their counts. */
#include "profile.h"

#define TIMED(call_id, comm, bytes, pmpi)                                          \
    do {                                                                           \
        uint64_t start_ = profile_ticks();                                         \
        int rc_ = pmpi;                                                            \
        profile_call(call_id, comm, bytes, -1, start_);                            \
        return rc_;                                                                \
    } while (0)

#define STARTED(call_id, comm, bytes, request, pmpi)                               \
    do {                                                                           \
        uint64_t start_ = profile_ticks();                                         \
        int rc_ = pmpi;                                                            \
        profile_request(*(request), profile_call(call_id, comm, bytes, -1, start_), 0); \
        return rc_;                                                                \
    } while (0)

#define WIN_TIMED(call_id, win, bytes, pmpi)                                       \
    do {                                                                           \
        uint64_t start_ = profile_ticks();                                         \
        int rc_ = pmpi;                                                            \
        profile_win_call(call_id, win, bytes, start_);                             \
        return rc_;                                                                \
    } while (0)

static int rank_in(MPI_Comm comm)
{
    int rank;
    PMPI_Comm_rank(comm, &rank);
    return rank;
}

static int64_t mean_bytes(const int counts[], MPI_Datatype type, MPI_Comm comm)
{
    int size;
    PMPI_Comm_size(comm, &size);
    int64_t sum = 0;
    for (int i = 0; i < size; i++)
        sum += counts[i];
    return size ? profile_bytes(1, type) * sum / size : 0;
}

int MPI_Barrier(MPI_Comm comm)
{
    TIMED(CALL_BARRIER, comm, 0, PMPI_Barrier(comm));
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    TIMED(CALL_BCAST, comm, profile_bytes(count, type), PMPI_Bcast(buf, count, type, root, comm));
}

int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm)
{
    TIMED(CALL_REDUCE, comm, profile_bytes(count, type),
          PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm));
}

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    TIMED(CALL_ALLREDUCE, comm, profile_bytes(count, type),
          PMPI_Allreduce(sbuf, rbuf, count, type, op, comm));
}

int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
               MPI_Datatype rtype, int root, MPI_Comm comm)
{
    int64_t bytes = sbuf == MPI_IN_PLACE ? profile_bytes(rcount, rtype)
                                         : profile_bytes(scount, stype);
    TIMED(CALL_GATHER, comm, bytes,
          PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm));
}

int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm)
{
    TIMED(CALL_GATHERV, comm, profile_bytes(scount, stype),
          PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm));
}

int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                MPI_Datatype rtype, int root, MPI_Comm comm)
{
    int64_t bytes = rbuf == MPI_IN_PLACE ? profile_bytes(scount, stype)
                                         : profile_bytes(rcount, rtype);
    TIMED(CALL_SCATTER, comm, bytes,
          PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm));
}

int MPI_Scatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype,
                 void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    TIMED(CALL_SCATTERV, comm, profile_bytes(rcount, rtype),
          PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm));
}

int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm)
{
    int64_t bytes = sbuf == MPI_IN_PLACE ? profile_bytes(rcount, rtype)
                                         : profile_bytes(scount, stype);
    TIMED(CALL_ALLGATHER, comm, bytes,
          PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm));
}

int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                   const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm)
{
    TIMED(CALL_ALLGATHERV, comm, mean_bytes(rcounts, rtype, comm),
          PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm));
}

int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                 MPI_Datatype rtype, MPI_Comm comm)
{
    int64_t bytes = sbuf == MPI_IN_PLACE ? profile_bytes(rcount, rtype)
                                         : profile_bytes(scount, stype);
    TIMED(CALL_ALLTOALL, comm, bytes,
          PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm));
}

int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
                  void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
                  MPI_Comm comm)
{
    TIMED(CALL_ALLTOALLV, comm, mean_bytes(rcounts, rtype, comm),
          PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm));
}

int MPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type,
                       MPI_Op op, MPI_Comm comm)
{
    TIMED(CALL_REDUCE_SCATTER, comm, profile_bytes(rcounts[rank_in(comm)], type),
          PMPI_Reduce_scatter(sbuf, rbuf, rcounts, type, op, comm));
}

int MPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype type,
                             MPI_Op op, MPI_Comm comm)
{
    TIMED(CALL_REDUCE_SCATTER_BLOCK, comm, profile_bytes(rcount, type),
          PMPI_Reduce_scatter_block(sbuf, rbuf, rcount, type, op, comm));
}

int MPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    TIMED(CALL_SCAN, comm, profile_bytes(count, type),
          PMPI_Scan(sbuf, rbuf, count, type, op, comm));
}

int MPI_Exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
               MPI_Comm comm)
{
    TIMED(CALL_EXSCAN, comm, profile_bytes(count, type),
          PMPI_Exscan(sbuf, rbuf, count, type, op, comm));
}

/* --- nonblocking collectives: their completion's time joins their row --- */

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    STARTED(CALL_IBARRIER, comm, 0, request, PMPI_Ibarrier(comm, request));
}

int MPI_Ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
               MPI_Request *request)
{
    STARTED(CALL_IBCAST, comm, profile_bytes(count, type), request,
            PMPI_Ibcast(buf, count, type, root, comm, request));
}

int MPI_Ireduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                MPI_Comm comm, MPI_Request *request)
{
    STARTED(CALL_IREDUCE, comm, profile_bytes(count, type), request,
            PMPI_Ireduce(sbuf, rbuf, count, type, op, root, comm, request));
}

int MPI_Iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm, MPI_Request *request)
{
    STARTED(CALL_IALLREDUCE, comm, profile_bytes(count, type), request,
            PMPI_Iallreduce(sbuf, rbuf, count, type, op, comm, request));
}

int MPI_Iallgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                   MPI_Datatype rtype, MPI_Comm comm, MPI_Request *request)
{
    STARTED(CALL_IALLGATHER, comm, profile_bytes(scount, stype), request,
            PMPI_Iallgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, request));
}

int MPI_Ialltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm, MPI_Request *request)
{
    STARTED(CALL_IALLTOALL, comm, profile_bytes(scount, stype), request,
            PMPI_Ialltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, request));
}

/* --- one-sided: a transfer's bytes at the origin; synchronisation of no size --- */

int MPI_Put(const void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
            int tcount, MPI_Datatype ttype, MPI_Win win)
{
    WIN_TIMED(CALL_PUT, win, profile_bytes(ocount, otype),
              PMPI_Put(obuf, ocount, otype, target, disp, tcount, ttype, win));
}

int MPI_Get(void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint disp, int tcount,
            MPI_Datatype ttype, MPI_Win win)
{
    WIN_TIMED(CALL_GET, win, profile_bytes(ocount, otype),
              PMPI_Get(obuf, ocount, otype, target, disp, tcount, ttype, win));
}

int MPI_Accumulate(const void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                   int tcount, MPI_Datatype ttype, MPI_Op op, MPI_Win win)
{
    WIN_TIMED(CALL_ACCUMULATE, win, profile_bytes(ocount, otype),
              PMPI_Accumulate(obuf, ocount, otype, target, disp, tcount, ttype, op, win));
}

int MPI_Win_fence(int assert, MPI_Win win)
{
    WIN_TIMED(CALL_WIN_FENCE, win, 0, PMPI_Win_fence(assert, win));
}

int MPI_Win_lock(int type, int rank, int assert, MPI_Win win)
{
    WIN_TIMED(CALL_WIN_LOCK, win, 0, PMPI_Win_lock(type, rank, assert, win));
}

int MPI_Win_unlock(int rank, MPI_Win win)
{
    WIN_TIMED(CALL_WIN_UNLOCK, win, 0, PMPI_Win_unlock(rank, win));
}

int MPI_Win_flush(int rank, MPI_Win win)
{
    WIN_TIMED(CALL_WIN_FLUSH, win, 0, PMPI_Win_flush(rank, win));
}
