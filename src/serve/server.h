/* `ebb serve`: the wiring of the control plane. server.c makes each part
 * (the store, the batch, the queue, the fleet and its ledger, the
 * provider, the scaler, the long-polls, the HTTP API) and hands each the
 * parts it needs; no other module includes this file. */
#ifndef EBB_SERVER_H
#define EBB_SERVER_H

#include "common/config.h"

struct server_options {
	const char *config_path; /* NULL: defaults */
	int test_clock;          /* POST /v1/admin/clock may move the clock */
};

/* Runs until SIGTERM or SIGINT; returns the process exit code. */
int server_run(const struct config *cfg, const struct server_options *o);

#endif
