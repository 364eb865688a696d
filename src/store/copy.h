/* `ebb store copy`: a SQLite store (DATA_DIR/ebb.db) into an empty
 * PostgreSQL database, for the user who outgrows the embedded default.
 * Jobs, the fleet and its history, the decisions, the ledger, the offers'
 * statistics and the alerts keep their ids; the copy is one transaction,
 * committed only once the count and the sums of every table are the same
 * on both sides, so a failed copy leaves the target as it was. The
 * source must not be in use by a serve (its data-dir lock is taken), nor
 * the target (the engine's lock is). */
#ifndef EBB_STORE_COPY_H
#define EBB_STORE_COPY_H

#include <stddef.h>
#include <stdio.h>

#include "common/config.h"

/* from: [store] kind = sqlite and its data_dir; to: kind = postgres with
 * its [postgres] section; to_url the same database's connection string.
 * A line per table into out. 0, or -1 with the reason in err. */
int store_copy(const struct config *from, const struct config *to, const char *to_url, FILE *out, char *err,
	       size_t errsize);

#endif
