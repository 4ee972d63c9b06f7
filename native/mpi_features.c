#include "mpi_features.h"

const struct feature_info features[FEATURE_COUNT] = {
    [FEATURE_PERSISTENT_COLLECTIVES] =
        {"persistent_collectives", "MPI-4 persistent collectives (MPI_Allreduce_init)",
         COMMSCOPE_HAVE_PERSISTENT_COLLECTIVES},
    [FEATURE_PARTITIONED] =
        {"partitioned", "MPI-4 partitioned communication (MPI_Psend_init)",
         COMMSCOPE_HAVE_PARTITIONED},
};
