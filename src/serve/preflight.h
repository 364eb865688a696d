/* What `ebb serve` checks of its configuration at start, before it takes
 * the data directory, opens the store or binds its port: the listen
 * address, who may reach it and how, the TLS files, what the provider
 * needs. `ebb config -c` runs the same function, so that a file it passes
 * starts, short of what only the lock, the store and the port can tell. */
#ifndef EBB_PREFLIGHT_H
#define EBB_PREFLIGHT_H

#include <stddef.h>

#include "common/config.h"

/* 0, or -1 with the reason in err, naming the key or the file. */
int preflight_check(const struct config *cfg, char *err, size_t errsize);

#endif
