#include "sync.h"

#include <string.h>

const struct sync_method *const sync_methods[] = {&sync_barrier, &sync_window, NULL};

const struct sync_method *sync_find(const char *name)
{
    for (int i = 0; sync_methods[i]; i++)
        if (strcmp(sync_methods[i]->name, name) == 0)
            return sync_methods[i];
    return NULL;
}
