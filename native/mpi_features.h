/* MPI-4 features a kernel or parameter may need, and whether this build has
 * them. The build (src/commscope/system/build.py) compiles and links each program of
 * native/probes/ against the MPI and defines COMMSCOPE_HAVE_<FEATURE> from
 * the result: a library may provide a feature while reporting an older
 * MPI_VERSION (Open MPI 5.0 reports 3.1 and has both). Built by hand, the
 * MPI's version decides. */
#ifndef COMMSCOPE_MPI_FEATURES_H
#define COMMSCOPE_MPI_FEATURES_H

#include <mpi.h>
#include <stdbool.h>

#ifndef COMMSCOPE_HAVE_PERSISTENT_COLLECTIVES
#define COMMSCOPE_HAVE_PERSISTENT_COLLECTIVES (MPI_VERSION >= 4)
#endif
#ifndef COMMSCOPE_HAVE_PARTITIONED
#define COMMSCOPE_HAVE_PARTITIONED (MPI_VERSION >= 4)
#endif

enum feature { FEATURE_NONE, FEATURE_PERSISTENT_COLLECTIVES, FEATURE_PARTITIONED, FEATURE_COUNT };

struct feature_info {
    const char *name;  /* as --describe and native/probes/NAME.c name it */
    const char *calls; /* what it is, for a refusal */
    bool present;
};
extern const struct feature_info features[FEATURE_COUNT];

#endif
